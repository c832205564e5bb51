import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from '../../../test/kit/app.js';
import { call, graphql } from '../../../test/kit/http.js';
import { type Caller, seedCaller, seedTree } from '../../../test/kit/seed.js';
import { Scopes } from '../../auth/scopes.js';
import { newId } from '../../infra/ids.js';
import { asPerson, seedPerson, signedIn } from '../../../test/kit/people.js';
import { investigationRow, seedInvestigation } from './investigations.fixtures.js';
import { expectOneAnswerWinsTheRace } from './triage.fixtures.js';
import { CONFIRMED_SEVERITY_STEP, TRIAGE_LIMITS } from './triage.model.js';

const DAY_MS = 86_400_000;
const TRIAGE = 'triage { status resolution resolvedAt answer note answeredBy { kind id } answeredAt assigneeId severityRaise }';

const ANSWER = `mutation ($id: String!, $answer: TriageAnswer!, $note: String, $days: Int) {
  answerInvestigation(id: $id, answer: $answer, note: $note, expiresInDays: $days) { id severity ${TRIAGE} }
}`;
const SET_STATUS = `mutation ($id: String!, $status: TriageStatus!, $resolution: TriageResolution) {
  setInvestigationStatus(id: $id, status: $status, resolution: $resolution) { id ${TRIAGE} }
}`;
const COMMENT = `mutation ($id: String!, $text: String!) {
  commentOnInvestigation(id: $id, text: $text) { id text author { kind id } createdAt }
}`;
const HISTORY = `query ($id: String!, $first: Int, $after: String) {
  investigation(id: $id) {
    comments(first: $first, after: $after) { totalCount pageInfo { hasNextPage endCursor } edges { node { text author { kind id } } } }
    activity(first: 50) { totalCount edges { node { kind actor { kind id } data } } }
 }
}`;
const SUPPRESSIONS = `query ($customerId: String!, $active: Boolean, $investigationId: String) {
  suppressions(customerId: $customerId, active: $active, investigationId: $investigationId) {
    total suppressions { id customerId detector source destination reason investigationId createdBy { kind id } createdAt expiresAt revokedAt revokedBy { kind id } active }
 }
}`;
const REVOKE = `mutation ($id: String!) { revokeSuppression(id: $id) { id active revokedAt revokedBy { kind id } } }`;

type GraphQLResult = Awaited<ReturnType<typeof graphql>>;
const code = (res: GraphQLResult) => res.errors?.[0]?.extensions?.code;

describe('investigation triage', () => {
  let t: TestApp;
  let tree: Awaited<ReturnType<typeof seedTree>>;
  let other: Awaited<ReturnType<typeof seedTree>>;
  const seed = (customerId: string, f: Parameters<typeof seedInvestigation>[2] = {}) => seedInvestigation(t.app.db.prisma, customerId, f);
  const gql = (caller: Caller, query: string, variables: Record<string, unknown>) => graphql(t.url, query, variables, caller.token);
  const eventsOf = (subject: string) => t.app.db.prisma.event.findMany({ where: { subject }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });

  beforeAll(async () => {
    t = await startTestApp({ env: { DETECTION_INTERVAL_SECONDS: '0', AUTOMATION_ALLOW_PRIVATE_TARGETS: 'true' } });
    tree = await seedTree(t.app);
    other = await seedTree(t.app);
  });
  afterAll(() => t.stop());

  describe('who may triage', () => {
    it('needs the search_api scope for every triage mutation and the suppression list', async () => {
      const id = await seed(tree.childA.id);
      const nodeOnly = await seedCaller(t.app, tree.childA.id, [Scopes.nodeApi]);
      for (const [query, variables] of [
        [ANSWER, { id, answer: 'UNSURE' }],
        [SET_STATUS, { id, status: 'ACKNOWLEDGED' }],
        [COMMENT, { id, text: 'x' }],
        [REVOKE, { id: 'sup_x' }],
        [SUPPRESSIONS, { customerId: tree.childA.id }],
      ] as const) {
        const res = await gql(nodeOnly, query, variables);
        expect(res.errors?.[0]?.extensions).toMatchObject({
          code: 'authorization_error',

          details: { reason: 'insufficient_scope', required_scope: Scopes.searchApi },
        });
      }
      const row = await t.app.db.prisma.investigation.findUniqueOrThrow({ where: { id } });
      expect(row).toMatchObject({ triageStatus: 'new', answer: null });
      expect(await t.app.db.prisma.investigationComment.count({ where: { investigationId: id } })).toBe(0);
    });

    it.each([
      ["the parent's, by a child", () => tree.childACaller, () => tree.msp.id],
      ["a sibling's", () => tree.childACaller, () => tree.childB.id],
      ["another tree's", () => tree.mspCaller, () => other.childA.id],
    ])('answers not_found for %s investigation, and changes nothing', async (_name, caller, owner) => {
      const id = await seed(owner());
      for (const [query, variables] of [
        [ANSWER, { id, answer: 'AUTHORIZED' }],
        [SET_STATUS, { id, status: 'ACKNOWLEDGED' }],
        [COMMENT, { id, text: 'mine now' }],
      ] as const) {
        const res = await gql(caller(), query, variables);
        expect(res.errors?.[0]?.extensions).toMatchObject({ code: 'not_found' });
      }
      expect(await gql(caller(), SUPPRESSIONS, { customerId: owner() })).toMatchObject({ errors: [{ extensions: { code: 'not_found' } }] });
      expect(await t.app.db.prisma.investigation.findUniqueOrThrow({ where: { id } })).toMatchObject({ triageStatus: 'new', answer: null });
      expect(await t.app.db.prisma.suppression.count({ where: { investigationId: id } })).toBe(0);
      expect(await eventsOf(id)).toEqual([]);
    });

    it("lets a parent triage its child's investigation, recording the parent's client as the actor", async () => {
      const id = await seed(tree.childB.id);
      const res = await gql(tree.mspCaller, ANSWER, { id, answer: 'UNSURE', note: 'asking the owner' });
      expect(res.errors).toBeUndefined();
      expect(res.data.answerInvestigation.triage).toMatchObject({
        status: 'ACKNOWLEDGED',
        answer: 'UNSURE',
        note: 'asking the owner',
        answeredBy: { kind: 'client', id: tree.mspCaller.clientId },
        answeredAt: expect.any(String),
      });
      const [event] = await eventsOf(id);
      expect(event).toMatchObject({ customerId: tree.childB.id, topic: 'triage', kind: 'investigation_answered' });
      expect(event!.data).toMatchObject({ actor_kind: 'client', actor_id: tree.mspCaller.clientId, answer: 'unsure' });
    });

    it('treats a running investigation, and ids that cannot exist, as missing', async () => {
      const running = await seed(tree.childA.id, { status: 'running' });
      for (const id of [running, 'inv_nope', 'x'.repeat(5000)]) {
        expect(code(await gql(tree.childACaller, ANSWER, { id, answer: 'UNSURE' }))).toBe('not_found');
      }
      expect(code(await gql(tree.childACaller, REVOKE, { id: 'sup_nope' }))).toBe('not_found');
    });
  });

  describe('status', () => {
    it('moves forward, refuses going back with invalid_transition naming where it may go, and reopens explicitly', async () => {
      const id = await seed(tree.childA.id);
      const move = (status: string, resolution?: string) => gql(tree.childACaller, SET_STATUS, { id, status, resolution });

      expect((await move('ACKNOWLEDGED')).data.setInvestigationStatus.triage.status).toBe('ACKNOWLEDGED');
      expect((await move('IN_PROGRESS')).data.setInvestigationStatus.triage.status).toBe('IN_PROGRESS');
      const back = await move('ACKNOWLEDGED');
      expect(back.errors?.[0]).toMatchObject({
        message: `Investigation ${id} is IN_PROGRESS: it cannot move to ACKNOWLEDGED, only to RESOLVED`,
        extensions: { code: 'invalid_transition', details: { from: 'IN_PROGRESS', to: 'ACKNOWLEDGED', allowed: ['RESOLVED'] } },
      });
      expect(code(await move('IN_PROGRESS'))).toBe('invalid_transition');

      const noResolution = await move('RESOLVED');
      expect(noResolution.errors?.[0]?.extensions).toMatchObject({ code: 'invalid_request', details: { field: 'resolution' } });
      expect(code(await move('IN_PROGRESS', 'MALICIOUS'))).toBe('invalid_request');

      const resolved = (await move('RESOLVED', 'FALSE_POSITIVE')).data.setInvestigationStatus.triage;
      expect(resolved).toMatchObject({ status: 'RESOLVED', resolution: 'FALSE_POSITIVE', resolvedAt: expect.any(String) });
      expect((await move('ACKNOWLEDGED')).errors?.[0]?.extensions?.details).toMatchObject({ from: 'RESOLVED', allowed: ['IN_PROGRESS'] });
      expect(code(await gql(tree.childACaller, ANSWER, { id, answer: 'UNSURE' }))).toBe('invalid_transition');

      const reopened = (await move('IN_PROGRESS')).data.setInvestigationStatus.triage;
      expect(reopened).toMatchObject({ status: 'IN_PROGRESS', resolution: null, resolvedAt: null });

      const history = (await gql(tree.childACaller, HISTORY, { id })).data.investigation.activity;
      expect(history.edges.map((e: any) => [e.node.kind, e.node.data.from, e.node.data.to])).toEqual([
        ['status_changed', 'new', 'acknowledged'],
        ['status_changed', 'acknowledged', 'in_progress'],
        ['status_changed', 'in_progress', 'resolved'],
        ['reopened', 'resolved', 'in_progress'],
      ]);
      const kinds = (await eventsOf(id)).map((e) => `${e.topic}/${e.kind}`);
      expect(kinds).toEqual(Array(4).fill('triage/investigation_status_changed'));
    });
  });

  describe('concurrency', () => {
    it('serializes changes to one investigation: of racing AUTHORIZED answers one wins and one suppression exists', () => expectOneAnswerWinsTheRace(t));
  });

  describe('answers', () => {
    it('AUTHORIZED resolves it and suppresses its subject for 90 days; revoking ends the suppression', async () => {
      const id = await seed(tree.childA.id, { detector: 'exfil', source: '10.20.1.70' });
      const before = Date.now();
      const res = await gql(tree.childACaller, ANSWER, { id, answer: 'AUTHORIZED', note: 'nightly backup to our provider' });
      expect(res.errors).toBeUndefined();
      expect(res.data.answerInvestigation.triage).toMatchObject({ status: 'RESOLVED', resolution: 'AUTHORIZED', answer: 'AUTHORIZED' });

      const listed = await gql(tree.mspCaller, SUPPRESSIONS, { customerId: tree.childA.id, investigationId: id });
      expect(listed.data.suppressions.total).toBe(1);
      const [suppression] = listed.data.suppressions.suppressions;
      expect(suppression).toMatchObject({
        customerId: tree.childA.id,
        detector: 'exfil',
        source: '10.20.1.70',
        destination: 'Contabo GmbH',
        reason: 'nightly backup to our provider',
        investigationId: id,
        createdBy: { kind: 'client', id: tree.childACaller.clientId },
        revokedAt: null,
        active: true,
      });
      const lasts = Date.parse(suppression.expiresAt) - before;
      expect(lasts).toBeGreaterThanOrEqual(90 * DAY_MS);
      expect(lasts).toBeLessThan(90 * DAY_MS + 60_000);

      const revoked = await gql(tree.mspCaller, REVOKE, { id: suppression.id });
      expect(revoked.data.revokeSuppression).toMatchObject({
        active: false,
        revokedAt: expect.any(String),
        revokedBy: { kind: 'client', id: tree.mspCaller.clientId },
      });
      // Revoking again changes nothing and records nothing.
      expect((await gql(tree.mspCaller, REVOKE, { id: suppression.id })).data.revokeSuppression.revokedAt).toBe(revoked.data.revokeSuppression.revokedAt);
      expect((await gql(tree.childACaller, SUPPRESSIONS, { customerId: tree.childA.id, active: true, investigationId: id })).data.suppressions.total).toBe(0);
      expect((await gql(tree.childACaller, SUPPRESSIONS, { customerId: tree.childA.id, active: false, investigationId: id })).data.suppressions.total).toBe(1);
      // Another tree cannot revoke it.
      expect(code(await gql(other.mspCaller, REVOKE, { id: suppression.id }))).toBe('not_found');

      const history = (await gql(tree.childACaller, HISTORY, { id })).data.investigation.activity;
      expect(history.edges.map((e: any) => e.node.kind)).toEqual(['answered', 'status_changed', 'suppressed', 'suppression_revoked']);
      const events = [...(await eventsOf(id)), ...(await eventsOf(suppression.id))].map((e) => `${e.topic}/${e.kind}`);
      expect(events).toEqual([
        'triage/investigation_answered',
        'triage/investigation_status_changed',
        'suppressions/suppression_created',
        'suppressions/suppression_revoked',
      ]);
    });

    it(`pages suppressions ${TRIAGE_LIMITS.page.max} at most, and refuses a negative offset`, async () => {
      const page = (limit: number, offset = 0) =>
        gql(tree.childACaller, 'query ($c: String!, $l: Int, $o: Int) { suppressions(customerId: $c, limit: $l, offset: $o) { limit offset } }', {
          c: tree.childA.id,
          l: limit,
          o: offset,
        });
      expect((await page(5000)).data.suppressions).toEqual({ limit: TRIAGE_LIMITS.page.max, offset: 0 });
      expect((await page(0)).data.suppressions).toEqual({ limit: 1, offset: 0 });
      expect((await page(10, -1)).errors?.[0]?.extensions).toMatchObject({ code: 'invalid_request', details: { field: 'offset' } });
    });

    it('takes a suppression length of 1 to 365 days, and refuses anything else', async () => {
      const id = await seed(tree.childA.id);
      for (const days of [0, TRIAGE_LIMITS.suppressionDays.max + 1]) {
        const res = await gql(tree.childACaller, ANSWER, { id, answer: 'AUTHORIZED', days });
        expect(res.errors?.[0]?.extensions).toMatchObject({ code: 'invalid_request', details: { field: 'expiresInDays' } });
      }
      expect(code(await gql(tree.childACaller, ANSWER, { id, answer: 'UNSURE', note: 'n'.repeat(TRIAGE_LIMITS.note + 1) }))).toBe('invalid_request');
      expect((await gql(tree.childACaller, ANSWER, { id, answer: 'AUTHORIZED', days: TRIAGE_LIMITS.suppressionDays.max })).errors).toBeUndefined();
      const [s] = await t.app.db.prisma.suppression.findMany({ where: { investigationId: id } });
      expect(s!.expiresAt.getTime() - s!.createdAt.getTime()).toBeGreaterThanOrEqual(TRIAGE_LIMITS.suppressionDays.max * DAY_MS - 1000);
    });

    it('UNAUTHORIZED raises severity one step, keeps it in progress, and records investigation_confirmed for automation', async () => {
      const rule = await call(t.url, 'POST', '/rest/automation/1.0', {
        token: tree.childACaller.token,
        body: {
          name: 'confirmed',
          match: { topic: 'investigations', kinds: ['investigation_confirmed'] },
          action: { type: 'webhook', url: 'http://127.0.0.1:9/' },
        },
      });
      expect(rule.status, JSON.stringify(rule.body)).toBe(200);
      const id = await seed(tree.childA.id, { severity: 60, nodeIds: ['node_a'] });

      const confirmed = (await gql(tree.childACaller, ANSWER, { id, answer: 'UNAUTHORIZED', note: 'nobody here runs that' })).data.answerInvestigation;
      expect(confirmed).toMatchObject({
        severity: 60 + CONFIRMED_SEVERITY_STEP,
        triage: { status: 'IN_PROGRESS', answer: 'UNAUTHORIZED', severityRaise: CONFIRMED_SEVERITY_STEP },
      });
      // The same answer again raises nothing more and confirms nothing more.
      expect((await gql(tree.childACaller, ANSWER, { id, answer: 'UNAUTHORIZED' })).data.answerInvestigation.severity).toBe(60 + CONFIRMED_SEVERITY_STEP);
      const confirmations = (await eventsOf(id)).filter((e) => e.kind === 'investigation_confirmed');
      expect(confirmations).toHaveLength(1);
      expect(confirmations[0]).toMatchObject({ topic: 'investigations', customerId: tree.childA.id });
      expect(confirmations[0]!.data).toMatchObject({
        node_ids: ['node_a'],
        severity: 60 + CONFIRMED_SEVERITY_STEP,
        previous_severity: 60,
        actor_kind: 'client',
      });
      expect(await t.app.db.prisma.automationRun.count({ where: { ruleId: rule.body.rule.rule_id } })).toBe(1);

      // A changed answer takes the step back; the status stays where the work is.
      const unsure = (await gql(tree.childACaller, ANSWER, { id, answer: 'UNSURE' })).data.answerInvestigation;
      expect(unsure).toMatchObject({ severity: 60, triage: { status: 'IN_PROGRESS', severityRaise: 0 } });
    });

    it('never raises severity past 100', async () => {
      const id = await seed(tree.childA.id, { severity: 90 });
      expect((await gql(tree.childACaller, ANSWER, { id, answer: 'UNAUTHORIZED' })).data.answerInvestigation).toMatchObject({
        severity: 100,
        triage: { severityRaise: 10 },
      });
    });
  });

  describe('comments', () => {
    it('keeps comments with author and time, pages them, and refuses empty or overlong text', async () => {
      const id = await seed(tree.childA.id);
      for (const text of ['first', 'second', 'third']) expect((await gql(tree.childACaller, COMMENT, { id, text })).errors).toBeUndefined();
      const byParent = (await gql(tree.mspCaller, COMMENT, { id, text: '  from the MSP  ' })).data.commentOnInvestigation;
      expect(byParent).toMatchObject({ text: 'from the MSP', author: { kind: 'client', id: tree.mspCaller.clientId }, createdAt: expect.any(String) });

      const page1 = (await gql(tree.childACaller, HISTORY, { id, first: 2 })).data.investigation.comments;
      expect(page1.totalCount).toBe(4);
      expect(page1.edges.map((e: any) => e.node.text)).toEqual(['first', 'second']);
      expect(page1.pageInfo.hasNextPage).toBe(true);
      const page2 = (await gql(tree.childACaller, HISTORY, { id, first: 2, after: page1.pageInfo.endCursor })).data.investigation.comments;
      expect(page2.edges.map((e: any) => e.node.text)).toEqual(['third', 'from the MSP']);
      expect(page2.pageInfo.hasNextPage).toBe(false);
      // Paging arguments the connection cannot take are the caller's mistake, not a masked 500.
      expect(code(await gql(tree.childACaller, HISTORY, { id, first: -1 }))).toBe('invalid_request');
      expect(code(await gql(tree.childACaller, HISTORY, { id, after: 'not-a-cursor' }))).toBe('invalid_cursor');

      for (const text of ['', '   ', 'x'.repeat(TRIAGE_LIMITS.comment + 1)]) {
        const res = await gql(tree.childACaller, COMMENT, { id, text });
        expect(res.errors?.[0]?.extensions).toMatchObject({ code: 'invalid_request', details: { field: 'text' } });
      }
      expect((await gql(tree.childACaller, COMMENT, { id, text: 'x'.repeat(TRIAGE_LIMITS.comment) })).errors).toBeUndefined();
      const kinds = (await eventsOf(id)).map((e) => `${e.topic}/${e.kind}`);
      expect(kinds).toEqual(Array(5).fill('triage/investigation_commented'));
      // Another tree sees neither the investigation nor its thread.
      expect((await gql(other.mspCaller, HISTORY, { id })).data.investigation).toBeNull();
    });

    it(`holds at most ${TRIAGE_LIMITS.commentsPerInvestigation} comments per investigation`, async () => {
      const id = await seed(tree.childA.id);
      await t.app.db.prisma.investigationComment.createMany({
        data: Array.from({ length: TRIAGE_LIMITS.commentsPerInvestigation - 1 }, (_, i) => ({
          id: newId('cmt'),
          customerId: tree.childA.id,
          investigationId: id,
          actorKind: 'client',
          actorId: tree.childACaller.clientId,
          text: `seeded ${i}`,
        })),
      });
      const last = await gql(tree.childACaller, COMMENT, { id, text: 'the last one' });
      expect(last.errors).toBeUndefined();
      const over = await gql(tree.childACaller, COMMENT, { id, text: 'one too many' });
      expect(over.errors?.[0]?.extensions).toMatchObject({ code: 'comment_limit_reached' });
      const page = (await gql(tree.childACaller, HISTORY, { id, first: 5000 })).data.investigation.comments;
      expect(page).toMatchObject({ totalCount: TRIAGE_LIMITS.commentsPerInvestigation, pageInfo: { hasNextPage: true } });
      expect(page.edges).toHaveLength(TRIAGE_LIMITS.page.max);
    });
  });

  describe('the list and REST', () => {
    it('filters and sorts by triage status, answer and assignee', async () => {
      const { childA, childACaller } = await seedTree(t.app).then((t2) => ({ childA: t2.childA, childACaller: t2.childACaller }));
      const high = await seed(childA.id, { severity: 90 });
      const low = await seed(childA.id, { severity: 20 });
      const mid = await seed(childA.id, { severity: 50 });
      await gql(childACaller, ANSWER, { id: low, answer: 'UNAUTHORIZED' });
      await gql(childACaller, SET_STATUS, { id: high, status: 'RESOLVED', resolution: 'DUPLICATE' });
      await t.app.db.prisma.investigation.update({ where: { id: mid }, data: { assigneeId: 'usr_alice' } });
      const list = async (args: string) => {
        const res = await gql(childACaller, `{ investigations(${args}) { total investigations { id } } }`, {});
        expect(res.errors).toBeUndefined();
        return res.data.investigations.investigations.map((i: { id: string }) => i.id);
      };
      expect(await list('triageStatus: RESOLVED')).toEqual([high]);
      expect(await list('triageStatus: NEW')).toEqual([mid]);
      expect(await list('answer: UNAUTHORIZED')).toEqual([low]);
      expect(await list('assigneeId: "usr_alice"')).toEqual([mid]);
      // NEW first, then IN_PROGRESS, then RESOLVED.
      expect(await list('sort: "triage_status"')).toEqual([mid, low, high]);
      // UNAUTHORIZED first, unanswered last (most severe first among them).
      expect(await list('sort: "answer"')).toEqual([low, high, mid]);
      // Assigned first, unassigned last.
      expect(await list('sort: "assignee"')).toEqual([mid, high, low]);
      expect(code(await gql(childACaller, '{ investigations(sort: "assignees") { total } }', {}))).toBe('invalid_request');
    });

    it('lists the open investigations (not resolved), the resolved ones, and both with triageStatus', async () => {
      const { childA, childACaller } = await seedTree(t.app);
      const fresh = await seed(childA.id, { severity: 90 });
      const acknowledged = await seed(childA.id, { severity: 80 });
      const working = await seed(childA.id, { severity: 70 });
      const authorized = await seed(childA.id, { severity: 60 });
      await gql(childACaller, SET_STATUS, { id: acknowledged, status: 'ACKNOWLEDGED' });
      await gql(childACaller, ANSWER, { id: working, answer: 'UNAUTHORIZED' });
      await gql(childACaller, ANSWER, { id: authorized, answer: 'AUTHORIZED' });
      const list = async (args: string) => {
        const res = await gql(childACaller, `{ investigations(${args}) { total investigations { id } } }`, {});
        expect(res.errors).toBeUndefined();
        const ids: string[] = res.data.investigations.investigations.map((i: { id: string }) => i.id);
        return { total: res.data.investigations.total, ids: ids.sort() };
      };
      expect(await list('open: true')).toEqual({ total: 3, ids: [fresh, acknowledged, working].sort() });
      expect(await list('open: false')).toEqual({ total: 1, ids: [authorized] });
      expect((await list('open: null')).total).toBe(4);
      expect(await list('open: true, triageStatus: NEW')).toEqual({ total: 1, ids: [fresh] });
      expect(await list('open: true, triageStatus: RESOLVED')).toEqual({ total: 0, ids: [] });
      // Reopened, it is open again.
      await gql(childACaller, SET_STATUS, { id: authorized, status: 'IN_PROGRESS' });
      expect((await list('open: true')).ids).toContain(authorized);
    });

    it('REST answers carry the triage object, in wire spelling', async () => {
      const id = await seed(tree.childA.id);
      await gql(tree.childACaller, ANSWER, { id, answer: 'AUTHORIZED', note: 'pen test' });
      const one = await call(t.url, 'GET', `/rest/investigations/1.0/${id}`, { token: tree.childACaller.token });
      expect(one.status).toBe(200);
      expect(one.body.triage).toEqual({
        status: 'RESOLVED',
        resolution: 'AUTHORIZED',
        resolved_at: expect.any(String),
        answer: 'AUTHORIZED',
        note: 'pen test',
        answered_by: { kind: 'client', id: tree.childACaller.clientId },
        answered_at: expect.any(String),
        assignee_id: null,
        severity_raise: 0,
      });
      const page = await call(t.url, 'GET', '/rest/investigations/1.0?limit=200', { token: tree.childACaller.token });
      expect(page.body.investigations.find((i: { id: string }) => i.id === id).triage).toEqual(one.body.triage);
    });
  });

  describe('assignment, by people', () => {
    const ASSIGN = `mutation ($id: String!, $userId: String) { assignInvestigation(id: $id, userId: $userId) { id triage { assigneeId } } }`;

    it('hands an investigation to an analyst who sees it, records it once, and takes it back', async () => {
      const id = await seed(tree.childA.id);
      const analyst = await seedPerson(t.app, tree.childA.id, 'analyst');
      // An MSP's admin sees its children's investigations, so can be handed one.
      const mspAdmin = await seedPerson(t.app, tree.msp.id, 'admin');
      const cookie = await signedIn(t.url, analyst);
      const assign = (userId: string | null) => asPerson(t.url, cookie, ASSIGN, { id, userId });

      expect((await assign(analyst.userId)).data.assignInvestigation.triage.assigneeId).toBe(analyst.userId);
      expect((await assign(analyst.userId)).errors).toBeUndefined();
      expect((await assign(mspAdmin.userId)).data.assignInvestigation.triage.assigneeId).toBe(mspAdmin.userId);
      const mine = await asPerson(t.url, cookie, `{ investigations(assigneeId: "${mspAdmin.userId}") { investigations { id } } }`);
      expect(mine.data.investigations.investigations.map((i: { id: string }) => i.id)).toEqual([id]);
      expect((await assign(null)).data.assignInvestigation.triage.assigneeId).toBeNull();

      const history = await gql(tree.childACaller, HISTORY, { id });
      const assigned = history.data.investigation.activity.edges.map((e: { node: { kind: string; actor: object; data: object } }) => e.node);
      expect(assigned).toEqual([
        { kind: 'assigned', actor: { kind: 'user', id: analyst.userId }, data: { assignee_id: analyst.userId, previous_assignee_id: null } },
        { kind: 'assigned', actor: { kind: 'user', id: analyst.userId }, data: { assignee_id: mspAdmin.userId, previous_assignee_id: analyst.userId } },
        { kind: 'assigned', actor: { kind: 'user', id: analyst.userId }, data: { assignee_id: null, previous_assignee_id: mspAdmin.userId } },
      ]);
      expect(
        (await eventsOf(id)).filter((e) => e.kind === 'investigation_assigned').map((e) => (e.data as { assignee_id: string | null }).assignee_id),
      ).toEqual([analyst.userId, mspAdmin.userId, null]);
    });

    it('refuses a person who cannot triage it, and a viewer cannot assign', async () => {
      const id = await seed(tree.childA.id);
      const analyst = await seedPerson(t.app, tree.childA.id, 'analyst');
      const viewer = await seedPerson(t.app, tree.childA.id, 'viewer');
      const sibling = await seedPerson(t.app, tree.childB.id, 'analyst');
      const stranger = await seedPerson(t.app, other.childA.id, 'admin');
      const cookie = await signedIn(t.url, analyst);
      for (const userId of [viewer.userId, sibling.userId, stranger.userId, 'usr_nobody']) {
        const res = await asPerson(t.url, cookie, ASSIGN, { id, userId });
        expect(res.errors?.[0]).toMatchObject({
          extensions: { code: 'invalid_request' },
          message: expect.stringMatching(/^userId must name an active analyst/),
        });
      }
      const byViewer = await asPerson(t.url, await signedIn(t.url, viewer), ASSIGN, { id, userId: analyst.userId });
      expect(byViewer.errors?.[0]?.extensions?.code).toBe('authorization_error');
      // Another tree's investigation is not found, whoever is named.
      const foreign = await seed(other.childA.id);
      expect((await asPerson(t.url, cookie, ASSIGN, { id: foreign, userId: analyst.userId })).errors?.[0]?.extensions?.code).toBe('not_found');
      expect((await t.app.db.prisma.investigation.findUniqueOrThrow({ where: { id } })).assigneeId).toBeNull();
    });
  });

  describe('the list, one tenant at a time', () => {
    it("narrows an MSP's list to one child, and a tenant outside the tree is not found", async () => {
      const a = await seed(tree.childA.id);
      const b = await seed(tree.childB.id);
      const ids = async (caller: Caller, customerId: string) => {
        const res = await gql(caller, `query($c: String) { investigations(customerId: $c, limit: 200) { total investigations { id customerId } } }`, {
          c: customerId,
        });
        return res;
      };
      const childA = await ids(tree.mspCaller, tree.childA.id);
      expect(new Set(childA.data.investigations.investigations.map((i: { customerId: string }) => i.customerId))).toEqual(new Set([tree.childA.id]));
      expect(childA.data.investigations.investigations.map((i: { id: string }) => i.id)).toContain(a);
      expect(childA.data.investigations.investigations.map((i: { id: string }) => i.id)).not.toContain(b);
      expect(childA.data.investigations.total).toBe(childA.data.investigations.investigations.length);
      expect((await ids(tree.childACaller, tree.childB.id)).errors?.[0]?.extensions?.code).toBe('not_found');
      expect((await ids(tree.mspCaller, other.childA.id)).errors?.[0]?.extensions?.code).toBe('not_found');
    });
  });

  describe('assignee names', () => {
    const NAMES = `query ($customerId: String) {
      investigations(customerId: $customerId, limit: 200) { investigations { id triage { assigneeId } assignee { id name } } }
    }`;
    const ASSIGNABLE = 'query ($customerId: String!) { assignablePeople(customerId: $customerId) { id name } }';
    const ASSIGN = 'mutation ($id: String!, $userId: String) { assignInvestigation(id: $id, userId: $userId) { id } }';
    const localPart = (email: string) => email.split('@')[0];

    it('names the assignee for anyone who reads the investigation, a 200-row page in one more statement', async () => {
      const { childA } = await seedTree(t.app);
      const [analyst, admin, viewer] = await Promise.all([
        seedPerson(t.app, childA.id, 'analyst'),
        seedPerson(t.app, childA.id, 'admin'),
        seedPerson(t.app, childA.id, 'viewer'),
      ]);
      await t.app.db.prisma.investigation.createMany({
        data: Array.from({ length: 200 }, (_, i) => ({
          ...investigationRow(childA.id, { source: `10.9.${Math.floor(i / 250)}.${i % 250}` }),
          assigneeId: i === 0 ? null : i % 2 ? analyst.userId : admin.userId,
        })),
      });
      const cookie = await signedIn(t.url, viewer);
      const statements = async (query: string) => {
        const before = t.app.db.stats.queries;
        const res = await asPerson(t.url, cookie, query, { customerId: childA.id });
        expect(res.errors).toBeUndefined();
        return { res, count: t.app.db.stats.queries - before };
      };
      // A person with a display name is named by it, one without by their email's local part.
      await t.app.db.prisma.user.update({ where: { id: admin.userId }, data: { name: 'Ada Admin' } });
      const unnamedQuery = NAMES.replace('assignee { id name }', '');
      await statements(unnamedQuery); // warms the process-wide tenant cache
      const unnamed = await statements(unnamedQuery);
      const named = await statements(NAMES);
      const rows = named.res.data.investigations.investigations as Array<{
        triage: { assigneeId: string | null };
        assignee: { id: string; name: string } | null;
      }>;
      expect(rows).toHaveLength(200);
      const byId = { [analyst.userId]: localPart(analyst.email), [admin.userId]: 'Ada Admin' };
      for (const row of rows) {
        expect(row.assignee).toEqual(row.triage.assigneeId ? { id: row.triage.assigneeId, name: byId[row.triage.assigneeId] } : null);
      }
      expect([unnamed.count, named.count]).toEqual([unnamed.count, unnamed.count + 1]);
    });

    it("names a person of a tenant outside the reader's tree to no one", async () => {
      const { msp, childA, mspCaller, childACaller } = await seedTree(t.app);
      const mspAnalyst = await seedPerson(t.app, msp.id, 'analyst');
      const id = await seed(childA.id);
      expect((await gql(mspCaller, ASSIGN, { id, userId: mspAnalyst.userId })).errors).toBeUndefined();
      const read = async (caller: Caller) =>
        (await gql(caller, '{ investigations { investigations { id assignee { id name } } } }', {})).data.investigations.investigations;
      expect(await read(mspCaller)).toContainEqual({ id, assignee: { id: mspAnalyst.userId, name: localPart(mspAnalyst.email) } });
      // The child's caller reads the investigation, but the MSP's people are not its to name.
      expect(await read(childACaller)).toEqual([{ id, assignee: null }]);
    });

    it('names who commented and answered: a person by email, an API client by description, nobody outside the tree', async () => {
      const { msp, childA, mspCaller, childACaller } = await seedTree(t.app);
      await t.app.db.prisma.apiClient.update({ where: { id: childACaller.clientId }, data: { description: 'nightly triage script' } });
      const mspAnalyst = await seedPerson(t.app, msp.id, 'analyst');
      const id = await seed(childA.id);
      expect((await asPerson(t.url, await signedIn(t.url, mspAnalyst), COMMENT, { id, text: 'looking' })).errors).toBeUndefined();
      expect((await gql(childACaller, ANSWER, { id, answer: 'AUTHORIZED', note: 'backup job' })).errors).toBeUndefined();
      expect((await gql(mspCaller, ASSIGN, { id, userId: mspAnalyst.userId })).errors).toBeUndefined();
      const NAMED = `query ($id: String!) { investigation(id: $id) {
        triage { answeredBy { kind name } } comments { edges { node { author { kind name } } } }
        activity { edges { node { kind assignee { kind name } } } }
      } }`;
      const read = async (caller: Caller) => (await gql(caller, NAMED, { id })).data.investigation;
      const byMsp = await read(mspCaller);
      expect(byMsp.triage.answeredBy).toEqual({ kind: 'client', name: 'nightly triage script' });
      expect(byMsp.comments.edges[0].node.author).toEqual({ kind: 'user', name: localPart(mspAnalyst.email) });
      const assigned = (investigation: { activity: { edges: Array<{ node: { kind: string; assignee: unknown } }> } }) =>
        investigation.activity.edges.filter((e) => e.node.kind === 'assigned').map((e) => e.node.assignee);
      expect(assigned(byMsp)).toEqual([{ kind: 'user', name: localPart(mspAnalyst.email) }]);
      // The child reads all of it, but its MSP's people are not its to name.
      const byChild = await read(childACaller);
      expect(byChild.comments.edges[0].node.author).toEqual({ kind: 'user', name: null });
      expect(assigned(byChild)).toEqual([{ kind: 'user', name: null }]);
      expect(
        byChild.activity.edges
          .filter((e: { node: { kind: string; assignee: unknown } }) => e.node.kind !== 'assigned')
          .every((e: { node: { assignee: unknown } }) => e.node.assignee === null),
      ).toBe(true);
    });

    it("lists the active analysts and admins of a tenant to assign to (and an MSP's own), for analysts, 404 outside the tree", async () => {
      const { msp, childA, childB, mspCaller } = await seedTree(t.app);
      const [analyst, admin, viewer, gone] = await Promise.all([
        seedPerson(t.app, childA.id, 'analyst'),
        seedPerson(t.app, childA.id, 'admin'),
        seedPerson(t.app, childA.id, 'viewer'),
        seedPerson(t.app, childA.id, 'analyst'),
      ]);
      const mspAnalyst = await seedPerson(t.app, msp.id, 'analyst');
      await seedPerson(t.app, msp.id, 'viewer');
      await t.app.db.prisma.user.update({ where: { id: gone.userId }, data: { status: 'disabled' } });
      const named = (people: Array<{ userId: string; email: string }>) =>
        people.sort((a, b) => a.email.localeCompare(b.email)).map((p) => ({ id: p.userId, name: localPart(p.email) }));
      const expected = named([analyst, admin]);
      const asAnalyst = await asPerson(t.url, await signedIn(t.url, analyst), ASSIGNABLE, { customerId: childA.id });
      expect(asAnalyst.data?.assignablePeople).toEqual(expected);
      // The MSP's caller may also hand a child's investigation to the MSP's own analysts and admins.
      expect((await gql(mspCaller, ASSIGNABLE, { customerId: childA.id })).data.assignablePeople).toEqual(named([analyst, admin, mspAnalyst]));
      const asViewer = await asPerson(t.url, await signedIn(t.url, viewer), ASSIGNABLE, { customerId: childA.id });
      expect(asViewer.errors?.[0]?.extensions).toMatchObject({ code: 'authorization_error', details: { reason: 'insufficient_role' } });
      expect((await asPerson(t.url, await signedIn(t.url, analyst), ASSIGNABLE, { customerId: childB.id })).errors?.[0]?.extensions?.code).toBe('not_found');
      expect(code(await gql(other.mspCaller, ASSIGNABLE, { customerId: childA.id }))).toBe('not_found');
    });
  });
});
