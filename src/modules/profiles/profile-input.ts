import { badRequest, missingFields } from '../../errors.js';
import { codePoints, formattingProblem, nameProblem } from '../../infra/text.js';
import { fieldProblem, fieldSpec, serviceFields, serviceNames, stringListProblem } from './services-defaults.js';

export const UPDATE_CHANNELS = ['stable', 'dev', 'pinned'] as const;
export type UpdateChannel = (typeof UPDATE_CHANNELS)[number];

export const PROFILE_LIMITS = { name: 200, description: 2000, tags: 50, tag: 64 } as const;

/** What a caller may send to create a profile; every field may be absent or null. */
export interface CreateProfileInput {
  name?: string | null;
  description?: string | null;
  services?: unknown;
  tags?: readonly string[] | null;
  updateChannel?: string | null;
  fleetStaging?: boolean | null;
  autoUpdate?: boolean | null;
  customerId?: string | null;
}

/** A validated profile, ready to store; `customerId` is still the caller's choice, unchecked. */
export interface ValidProfile {
  name: string;
  description: string | null;
  services: Record<string, Record<string, unknown>>;
  tags: string[];
  updateChannel: UpdateChannel;
  fleetStaging: boolean;
  autoUpdate: boolean;
  customerId: string | null;
}

interface Problem {
  field: string;
  message: string;
}

/** Notes may span lines; NUL (which PostgreSQL cannot store) and the other controls may not. */
const controlsExceptWhitespace = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]|\p{Cs}/u;

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** At most this many problems are reported; a request with more is wrong in a way one fix won't cure. */
const MAX_PROBLEMS = 20;

/** A submitted key as it appears in a message: unknown keys are echoed, but never at length. */
const key = (name: string) => (codePoints(name) > 64 ? `${[...name].slice(0, 64).join('')}…` : name);

const describe = (value: unknown) => (value === null ? 'null' : Array.isArray(value) ? 'an array' : `a ${typeof value}`);

/**
 * Checks a create request against api-spec.md (Profiles) and wire.md 12.4. Every problem is
 * reported at once, each naming its field by its wire path (`services.packet.num_workers`).
 * Types are checked here even where GraphQL already did, so that the service is safe to call
 * from anywhere. `services` is returned exactly as submitted: defaults are never filled in here.
 */
export function validateCreateProfile(input: CreateProfileInput): ValidProfile {
  const name = typeof input.name === 'string' ? input.name.trim() : input.name;
  if (name === undefined || name === null || name === '') throw missingFields(['name']);

  const problems: Problem[] = [];
  const fail = (field: string, message: string) => problems.push({ field, message: `${field} ${message}` });

  const nameIssue = typeof name === 'string' ? nameProblem(name, PROFILE_LIMITS.name) : 'must be a string';
  if (nameIssue) fail('name', nameIssue);

  const description = input.description ?? null;
  if (description !== null) {
    const descriptionIssue =
      typeof description !== 'string'
        ? 'must be a string or null'
        : codePoints(description) > PROFILE_LIMITS.description
          ? `must be at most ${PROFILE_LIMITS.description} characters`
          : controlsExceptWhitespace.test(description)
            ? 'must not contain control characters other than tab and newline'
            : formattingProblem(description);
    if (descriptionIssue) fail('description', descriptionIssue);
  }

  const tags = input.tags ?? [];
  const tagProblem = stringListProblem(tags, PROFILE_LIMITS.tags, PROFILE_LIMITS.tag);
  if (tagProblem) fail(`tags${tagProblem.at ?? ''}`, tagProblem.message);

  const updateChannel = input.updateChannel ?? 'stable';
  if (!(UPDATE_CHANNELS as readonly unknown[]).includes(updateChannel)) {
    fail('update_channel', `must be one of ${UPDATE_CHANNELS.join(', ')}`);
  }
  const fleetStaging = input.fleetStaging ?? false;
  if (typeof fleetStaging !== 'boolean') fail('fleet_staging', 'must be a boolean');
  const autoUpdate = input.autoUpdate ?? true;
  if (typeof autoUpdate !== 'boolean') fail('auto_update', 'must be a boolean');
  const customerId = input.customerId ?? null;
  if (customerId !== null && typeof customerId !== 'string') fail('customer_id', 'must be a string');

  const services = input.services ?? {};
  checkServices(services, fail);

  if (problems.length) {
    const shown = problems.slice(0, MAX_PROBLEMS);
    const more = problems.length > shown.length ? `; and ${problems.length - shown.length} more` : '';
    throw badRequest('invalid_request', shown.map((p) => p.message).join('; ') + more, { errors: shown });
  }
  return {
    name: name as string,
    description,
    services: services as ValidProfile['services'],
    tags: [...tags],
    updateChannel: updateChannel as UpdateChannel,
    fleetStaging,
    autoUpdate,
    customerId,
  };
}

function checkServices(services: unknown, fail: (field: string, message: string) => void): void {
  if (!isObject(services)) return fail('services', `must be an object, not ${describe(services)}`);
  for (const [block, fields] of Object.entries(services)) {
    const path = `services.${key(block)}`;
    if (!Object.hasOwn(serviceFields, block)) {
      fail(path, `is not a known service (known: ${serviceNames.join(', ')})`);
      continue;
    }
    if (!isObject(fields)) {
      fail(path, `must be an object, not ${describe(fields)}`);
      continue;
    }
    for (const [field, value] of Object.entries(fields)) {
      const spec = fieldSpec(block, field);
      if (!spec) {
        const known = Object.keys(serviceFields[block as keyof typeof serviceFields]).join(', ');
        fail(`${path}.${key(field)}`, `is not a known field of ${block} (known: ${known})`);
        continue;
      }
      const problem = fieldProblem(spec, value);
      if (problem) fail(`${path}.${field}${problem.at ?? ''}`, problem.message);
    }
  }
}
