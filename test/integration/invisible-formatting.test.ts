/**
 * Display names, hostnames and descriptions refuse invisible format characters at every door
 * that stores one: bidi controls would show `exe.txt` for a name stored as `txt.exe`, and
 * zero-width characters would make two different names look alike. Writing that needs a format
 * character (a joiner inside a word or an emoji, an emoji flag's tags) is still accepted.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from '../kit/app.js';
import { call } from '../kit/http.js';
import { type Caller, seedCaller, seedTree } from '../kit/seed.js';

const TRICKS: Array<[string, string]> = [
  ['a right-to-left override (U+202E)', 'invoice\u202Etxt.exe'],
  ['a left-to-right mark (U+200E)', 'a\u200Eb'],
  ['a right-to-left isolate (U+2067)', 'a\u2067b\u2069'],
  ['an Arabic letter mark (U+061C)', 'a\u061Cb'],
  ['a zero-width space (U+200B)', 'ad\u200Bmin'],
  ['a zero-width no-break space (U+FEFF)', 'ad\uFEFFmin'],
  ['a word joiner (U+2060)', 'ad\u2060min'],
  ['a stray zero-width joiner (U+200D)', 'admin\u200D'],
  ['a tag character outside an emoji flag (U+E0041)', 'a\u{E0041}b'],
];

/** Writing in which a format character belongs. */
const WRITING = ['👩‍💻 team', '🏳️‍🌈', 'می‌خواهم', 'क्‍ष', '🏴󠁧󠁢󠁳󠁣󠁴󠁿 office'];

describe('invisible format characters in names, hostnames and descriptions', () => {
  let t: TestApp;
  let tree: Awaited<ReturnType<typeof seedTree>>;
  let ingest: Caller;

  beforeAll(async () => {
    t = await startTestApp();
    tree = await seedTree(t.app);
    ingest = await seedCaller(t.app, tree.childA.id, ['p.token.scope.ingest']);
  });
  afterAll(() => t.stop());

  /** Each door, the field it names, and a request carrying `text` in that field. */
  const doors: Array<[string, string, (text: string) => Promise<{ status: number; body: any }>]> = [
    ['profile', 'name', (text) => call(t.url, 'POST', '/rest/profiles/1.0', { token: tree.mspCaller.token, body: { name: text } })],
    ['profile', 'description', (text) => call(t.url, 'POST', '/rest/profiles/1.0', { token: tree.mspCaller.token, body: { name: 'p', description: text } })],
    ['profile', 'tags[0]', (text) => call(t.url, 'POST', '/rest/profiles/1.0', { token: tree.mspCaller.token, body: { name: 'p', tags: [text] } })],
    [
      'deployment',
      'name',
      (text) =>
        call(t.url, 'POST', '/rest/deployments/1.0', {
          token: tree.mspCaller.token,
          body: { name: text, handle: `h${Math.random().toString(36).slice(2, 9)}`, parent_id: tree.msp.id },
        }),
    ],
    [
      'automation rule',
      'name',
      (text) =>
        call(t.url, 'POST', '/rest/automation/1.0', {
          token: tree.mspCaller.token,
          body: { name: text, match: { topic: 'detections' }, action: { type: 'collector_update' } },
        }),
    ],
    [
      'provisioned node',
      'machine_id',
      (text) => call(t.url, 'POST', '/rest/nodes/provision/1.0', { token: tree.mspCaller.token, body: { customer_id: tree.childA.id, machine_id: text } }),
    ],
    [
      'provisioned node',
      'description',
      (text) => call(t.url, 'POST', '/rest/nodes/provision/1.0', { token: tree.mspCaller.token, body: { customer_id: tree.childA.id, description: text } }),
    ],
    [
      'legacy node',
      'hostname',
      (text) => call(t.url, 'POST', '/rest/oauth2/register/1.0', { token: ingest.token, body: { machine_id: `m-${Math.random()}`, hostname: text } }),
    ],
    ['device', 'hostname', (text) => call(t.url, 'POST', '/rest/oauth2/device/1.0', { body: { machine_id: 'm', hostname: text } })],
  ];

  describe.each(doors)('%s %s', (_door, field, send) => {
    it.each(TRICKS)('refuses %s with 400 invalid_request naming the field and the character', async (_trick, text) => {
      const res = await send(text);
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      const shown = `U+${[...text]
        .map((c) => c.codePointAt(0)!)
        .find((cp) => /\p{Cf}/u.test(String.fromCodePoint(cp)))!
        .toString(16)
        .toUpperCase()
        .padStart(4, '0')}`;
      expect(res.body).toMatchObject({
        code: 'invalid_request',
        message: expect.stringContaining(`${field} must not contain invisible formatting characters`),
      });
      expect(res.body.message).toContain(`(found ${shown})`);
    });

    it('accepts writing that needs a joiner or an emoji flag', async () => {
      for (const text of WRITING) {
        const res = await send(text);
        expect(res.status, `${text} → ${JSON.stringify(res.body)}`).toBeLessThan(300);
      }
    });
  });
});
