import { type Role, roles } from '../../auth/actions.js';
import { badRequest } from '../../errors.js';
import { nameProblem } from '../../infra/text.js';

/** A group the provider names, or the domain of the person's email, granting a role in the tenant. */
export type RoleRule = { group: string; role: Role } | { emailDomain: string; role: Role };

export const ROLE_RULE_LIMITS = { rules: 50, text: 200 } as const;

/** What the provider says of the person, as far as roles go. */
export interface ProviderIdentity {
  email: string;
  groups: readonly string[];
}

const matches = (rule: RoleRule, who: ProviderIdentity) =>
  'group' in rule ? who.groups.includes(rule.group) : who.email.toLowerCase().endsWith(`@${rule.emailDomain.toLowerCase()}`);

/** The highest role any rule grants the person; undefined when none applies (no access). */
export function roleFor(rules: readonly RoleRule[], who: ProviderIdentity): Role | undefined {
  let best = -1;
  for (const rule of rules) if (matches(rule, who)) best = Math.max(best, roles.indexOf(rule.role));
  return best < 0 ? undefined : roles[best];
}

/** Rules as an admin wrote them, checked: each names a group or an email domain (not both) and a role. */
export function checkRoleRules(rules: ReadonlyArray<{ group?: string | null; emailDomain?: string | null; role: Role }>): RoleRule[] {
  if (rules.length === 0) throw badRequest('invalid_request', 'roleRules must grant at least one role, or nobody could sign in');
  if (rules.length > ROLE_RULE_LIMITS.rules) throw badRequest('invalid_request', `roleRules must hold at most ${ROLE_RULE_LIMITS.rules} rules`);
  return rules.map((rule, i) => {
    const group = rule.group?.trim();
    const domain = rule.emailDomain?.trim().replace(/^@/, '').toLowerCase();
    if (!group === !domain) throw badRequest('invalid_request', `roleRules[${i}] must name either a group or an emailDomain`);
    const field = group ? `roleRules[${i}].group` : `roleRules[${i}].emailDomain`;
    const problem = nameProblem((group ?? domain)!, ROLE_RULE_LIMITS.text);
    if (problem) throw badRequest('invalid_request', `${field} ${problem}`);
    if (domain && !/^[a-z0-9-]+(\.[a-z0-9-]+)+$/.test(domain)) throw badRequest('invalid_request', `${field} must be a domain name such as example.com`);
    return group ? { group, role: rule.role } : { emailDomain: domain!, role: rule.role };
  });
}
