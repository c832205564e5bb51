import { type Session, type TenantScope, customerNotFound } from '../../auth/session.js';
import { DomainError, badRequest, missingFields, notFound } from '../../errors.js';
import type { AutomationRule, AutomationRun, Event } from '../../generated/prisma/client.js';
import { MAX_ID_LENGTH, newId, plausibleId } from '../../infra/ids.js';
import { nameProblem } from '../../infra/text.js';
import type { Tx } from '../events/events.store.js';
import { ActionType, actionTypes } from './actions.js';
import type { AutomationStore, RuleChanges } from './automation.store.js';
import { type Condition, type MatchInput, eventMatches, validateMatch } from './conditions.js';
import { TargetRefused, checkTarget, parseTargetUrl } from './targets.js';
import { type WebhookSecrets, generateWebhookSecret } from './webhook-secrets.js';

export const RULE_LIMITS = { name: 200, rulesPerTenant: 100, runs: { min: 1, default: 20, max: 100 } } as const;

export interface SaveRuleInput {
  ruleId?: string | null;
  customerId?: string | null;
  name?: string | null;
  enabled?: boolean | null;
  match?: MatchInput | null;
  action?: { type?: string | null; url?: string | null } | null;
  rotateSecret?: boolean | null;
}

export interface SavedRule {
  created: boolean;
  rule: AutomationRule;
  /** The webhook signing secret: only when it was just created (new rule, new webhook action, or rotation). */
  secret: string | null;
}

export interface AutomationOptions {
  allowPrivateTargets: boolean;
}

const ruleNotFound = (ruleId: string) => notFound('not_found', `Automation rule ${ruleId.slice(0, MAX_ID_LENGTH)} was not found`);
const given = (value: string | null | undefined) => (typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined);

/** A rule's match as stored. */
export const matchOf = (rule: AutomationRule) => ({ topic: rule.topic, kinds: rule.kinds, conditions: rule.conditions as unknown as Condition[] });

/**
 * Automation rules (docs/automation.md): for a tenant or a child tenant, an event match and one
 * action. Every operation needs node_api and sees only the caller's tree; a rule or tenant
 * outside it behaves as missing. Runs are enqueued in the event's own transaction (`reaction`)
 * and executed by the AutomationRunner.
 */
export class AutomationService {
  constructor(
    private readonly store: AutomationStore,
    private readonly secrets: WebhookSecrets,
    private readonly options: AutomationOptions,
  ) {}

  /** The caller's tree's rules (or one tenant's), oldest first. */
  async list(session: Session, customerId?: string | null): Promise<AutomationRule[]> {
    const scope = await this.scope(session, 'automation.read');
    const only = given(customerId);
    if (only !== undefined) await session.assertTenant('automation.read', only);
    return this.store.listRules(scope, only);
  }

  async get(session: Session, ruleId: string): Promise<AutomationRule> {
    const scope = await this.scope(session, 'automation.read');
    const rule = plausibleId(ruleId) ? await this.store.findRule(scope, ruleId) : null;
    if (!rule) throw ruleNotFound(ruleId);
    return rule;
  }

  /** The newest runs of each rule (rules outside the tree have none), newest first. */
  async recentRuns(session: Session, ruleIds: readonly string[], limit?: number | null): Promise<Map<string, AutomationRun[]>> {
    const scope = await this.scope(session, 'automation.read');
    const { min, max, default: fallback } = RULE_LIMITS.runs;
    const take = Math.min(max, Math.max(min, Math.trunc(limit ?? fallback)));
    const runs = await this.store.recentRuns(scope, [...new Set(ruleIds)], take);
    const byRule = new Map<string, AutomationRun[]>(ruleIds.map((id) => [id, []]));
    for (const run of runs) byRule.get(run.ruleId)?.push(run);
    return byRule;
  }

  /** Creates a rule, or updates the rule `ruleId` (fields not given keep their value). */
  async save(session: Session, input: SaveRuleInput): Promise<SavedRule> {
    const scope = await this.scope(session, 'automation.write');
    if (input.ruleId !== null && input.ruleId !== undefined) return this.update(session, scope, input.ruleId, input);
    return this.create(session, scope, input);
  }

  /** Deletes a rule of the caller's tree; its pending runs are dropped with it. */
  async delete(session: Session, ruleId: string | null | undefined): Promise<{ ruleId: string }> {
    const scope = await this.scope(session, 'automation.write');
    const id = given(ruleId);
    if (!id) throw missingFields(['rule_id']);
    if (!plausibleId(id) || !(await this.store.deleteRule(scope, id))) throw ruleNotFound(id);
    return { ruleId: id };
  }

  /** Registered with the events service: enqueues a run for every matching rule, in the event's transaction. */
  readonly reaction = async (tx: Tx, event: Event): Promise<void> => {
    const rules = await this.store.rulesReacting(tx, event.customerId, event.topic);
    const matching = rules.filter((rule) => eventMatches(matchOf(rule), event));
    await this.store.insertRuns(
      tx,
      matching.map((rule) => ({ id: newId('run'), ruleId: rule.id, customerId: rule.customerId, eventId: event.id })),
    );
  };

  /** The webhook signing secret of a rule, for the runner. */
  secretOf = async (rule: AutomationRule): Promise<string> => {
    if (!rule.secretBox) throw new Error(`rule ${rule.id} has no webhook secret`);
    return this.secrets.open(rule.id, rule.secretBox);
  };

  private async create(session: Session, scope: TenantScope, input: SaveRuleInput): Promise<SavedRule> {
    const absent = [!given(input.name) && 'name', !given(input.match?.topic) && 'match.topic', !given(input.action?.type) && 'action.type'].filter(
      (f): f is string => Boolean(f),
    );
    if (absent.length) throw missingFields(absent);
    const customerId = given(input.customerId) ?? session.customerId;
    await session.assertTenant('automation.write', customerId);
    const name = checkName(input.name!);
    const match = validateMatch(input.match);
    const action = await this.validateAction(input.action!);
    if (input.rotateSecret && action.action !== ActionType.webhook) throw rotateOnlyWebhooks();
    const id = newId('rule');
    const secret = action.action === ActionType.webhook ? generateWebhookSecret() : null;
    const sealed = secret ? this.secrets.seal(id, secret) : null;
    const newRule = {
      id,
      customerId,
      name,
      enabled: input.enabled ?? true,
      topic: match.topic,
      kinds: match.kinds,
      conditions: match.conditions as object[],
      ...action,
      secretBox: sealed ? new Uint8Array(sealed) : null,
      createdBy: session.actor.id,
    };
    const rule = await this.store.createRuleWithinLimit(scope, newRule, RULE_LIMITS.rulesPerTenant).catch((error) => {
      // The tenant was deleted between the tree lookup and the insert.
      if ((error as { code?: string }).code === 'P2003') throw customerNotFound(customerId);
      throw error;
    });
    if (!rule) throw new DomainError(409, 'rule_limit_reached', `A tenant may have at most ${RULE_LIMITS.rulesPerTenant} automation rules`);
    return { created: true, rule, secret };
  }

  private async update(session: Session, scope: TenantScope, ruleId: string, input: SaveRuleInput): Promise<SavedRule> {
    const existing = plausibleId(ruleId) ? await this.store.findRule(scope, ruleId) : null;
    if (!existing) throw ruleNotFound(ruleId);
    const customerId = given(input.customerId);
    if (customerId !== undefined && customerId !== existing.customerId) {
      await session.assertTenant('automation.write', customerId);
      throw badRequest('invalid_request', 'customer_id of an existing rule cannot change; create a rule for the other tenant instead');
    }
    const changes: RuleChanges = {};
    if (input.name !== null && input.name !== undefined) changes.name = checkName(input.name);
    if (input.enabled !== null && input.enabled !== undefined) changes.enabled = input.enabled;
    if (input.match !== null && input.match !== undefined) {
      const match = validateMatch(input.match);
      Object.assign(changes, { topic: match.topic, kinds: match.kinds, conditions: match.conditions as object[] });
    }
    const action = input.action !== null && input.action !== undefined ? await this.validateAction(input.action) : undefined;
    const actionType = action?.action ?? existing.action;
    if (input.rotateSecret && actionType !== ActionType.webhook) throw rotateOnlyWebhooks();
    let secret: string | null = null;
    if (action) Object.assign(changes, action);
    if (actionType === ActionType.webhook && (existing.action !== ActionType.webhook || !existing.secretBox || input.rotateSecret)) {
      secret = generateWebhookSecret();
      Object.assign(changes, { secretBox: new Uint8Array(this.secrets.seal(existing.id, secret)), legacySecretKid: null });
    }
    if (actionType !== ActionType.webhook) Object.assign(changes, { webhookUrl: null, legacySecretKid: null, secretBox: null });
    const rule = await this.store.updateRule(scope, existing.id, changes);
    if (!rule) throw ruleNotFound(ruleId);
    return { created: false, rule, secret };
  }

  private async validateAction(input: { type?: string | null; url?: string | null }) {
    const type = given(input.type);
    if (!type) throw missingFields(['action.type']);
    if (!actionTypes.includes(type)) throw badRequest('invalid_request', `action.type must be one of ${actionTypes.join(', ')}`);
    if (type === ActionType.collectorUpdate) {
      if (given(input.url)) throw badRequest('invalid_request', 'action.url applies to webhook actions only');
      return { action: type, webhookUrl: null };
    }
    const raw = given(input.url);
    if (!raw) throw missingFields(['action.url']);
    const url = parseTargetUrl(raw);
    try {
      await checkTarget(url, this.options.allowPrivateTargets);
    } catch (error) {
      if (error instanceof TargetRefused) throw badRequest(error.code, `action.url: ${error.message}`);
      throw error;
    }
    return { action: type, webhookUrl: url.toString() };
  }

  private async scope(session: Session, action: 'automation.read' | 'automation.write'): Promise<TenantScope> {
    session.assert(action);
    return session.tenantScope();
  }
}

function checkName(raw: string): string {
  const name = raw.trim();
  if (!name) throw missingFields(['name']);
  const problem = nameProblem(name, RULE_LIMITS.name);
  if (problem) throw badRequest('invalid_request', `name ${problem}`);
  return name;
}

const rotateOnlyWebhooks = () => badRequest('invalid_request', 'rotate_secret applies to webhook actions only');
