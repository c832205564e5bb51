import { Scopes } from '../../auth/scopes.js';
import { Session, type TenantScope } from '../../auth/session.js';
import { DomainError } from '../../errors.js';
import type { AutomationRule, Event } from '../../generated/prisma/client.js';
import type { NodeCommandService } from '../control/commands.service.js';
import type { ClaimedRun } from './automation.store.js';
import { TargetRefused } from './targets.js';
import { postWebhook } from './webhook.js';
import { signatureHeader } from './webhook-secrets.js';

export const ActionType = { webhook: 'webhook', collectorUpdate: 'collector_update' } as const;
export type ActionType = (typeof ActionType)[keyof typeof ActionType];
export const actionTypes: readonly string[] = Object.values(ActionType);

/** What one attempt did. `retry` false means retrying cannot help (the run fails now). */
export type ActionOutcome =
  | { ok: true; responseCode: number | null; result: Record<string, unknown> | null }
  | { ok: false; retry: boolean; responseCode: number | null; error: string; result: Record<string, unknown> | null };

export interface ActionDeps {
  secretOf(rule: AutomationRule): Promise<string>;
  nodeCommands: Pick<NodeCommandService, 'update'>;
  loadScope: (customerId: string) => Promise<TenantScope>;
  allowPrivateTargets: boolean;
  webhookTimeoutMs: number;
}

export const USER_AGENT = 'breach-detection-automation/1.0';
/** A collector update goes to at most this many nodes of one event. */
const MAX_NODES = 20;

/** The body a webhook receives: stable across attempts of one run (only the signature's `t` changes). */
export function webhookBody(run: { id: string }, rule: AutomationRule, event: Event): string {
  return JSON.stringify({
    delivery_id: run.id,
    rule_id: rule.id,
    event: {
      event_id: event.id,
      customer_id: event.customerId,
      topic: event.topic,
      kind: event.kind,
      subject: event.subject,
      data: event.data,
      created_at: event.createdAt.toISOString(),
    },
  });
}

/**
 * The nodes an event is about: `data.node_id`, `data.node_ids`, or (node lifecycle events) the
 * subject. A collector_update action updates each.
 */
export function nodesOf(event: Event): string[] {
  const data = (event.data ?? {}) as Record<string, unknown>;
  const ids = [data.node_id, ...(Array.isArray(data.node_ids) ? data.node_ids : []), event.topic === 'node_lifecycle' ? event.subject : null];
  return [...new Set(ids.filter((id): id is string => typeof id === 'string' && id.length > 0 && id.length <= 200))].slice(0, MAX_NODES);
}

/** Executes a rule's action for one event, once. Never throws for an expected failure. */
export class Actions {
  constructor(private readonly deps: ActionDeps) {}

  run(rule: AutomationRule, event: Event, run: ClaimedRun, signal: AbortSignal): Promise<ActionOutcome> {
    if (rule.action === ActionType.webhook) return this.webhook(rule, event, run, signal);
    if (rule.action === ActionType.collectorUpdate) return this.collectorUpdate(rule, event);
    return Promise.resolve({ ok: false, retry: false, responseCode: null, error: `unknown action ${rule.action}`, result: null });
  }

  /**
   * 2xx is delivered. 408, 425, 429, 5xx and transport failures (refused, reset, timeout) are
   * retried; any other answer (3xx, 4xx) and a refused target fail the run at once.
   */
  private async webhook(rule: AutomationRule, event: Event, run: ClaimedRun, signal: AbortSignal): Promise<ActionOutcome> {
    if (!rule.webhookUrl) return { ok: false, retry: false, responseCode: null, error: 'the rule has no webhook url', result: null };
    const body = webhookBody(run, rule, event);
    const secret = await this.deps.secretOf(rule);
    const timestamp = Math.floor(Date.now() / 1000);
    try {
      const response = await postWebhook({
        url: rule.webhookUrl,
        body,
        headers: {
          'content-type': 'application/json',
          'user-agent': USER_AGENT,
          'x-signature': signatureHeader(secret, timestamp, body),
          'x-event-id': event.id,
          'x-event-topic': event.topic,
          'x-event-kind': event.kind,
          'x-delivery-id': run.id,
          'x-delivery-attempt': String(run.attempts),
        },
        allowPrivate: this.deps.allowPrivateTargets,
        timeoutMs: this.deps.webhookTimeoutMs,
        signal,
      });
      const result = { response_excerpt: response.excerpt, duration_ms: response.durationMs };
      if (response.status >= 200 && response.status < 300) return { ok: true, responseCode: response.status, result };
      const retry = response.status >= 500 || [408, 425, 429].includes(response.status);
      return { ok: false, retry, responseCode: response.status, error: `the receiver answered ${response.status}`, result };
    } catch (error) {
      if (error instanceof TargetRefused) return { ok: false, retry: false, responseCode: null, error: `${error.code}: ${error.message}`, result: null };
      const e = error as NodeJS.ErrnoException;
      const reason = e.name === 'TimeoutError' || e.name === 'AbortError' ? 'no answer in time' : (e.code ?? e.message);
      return { ok: false, retry: true, responseCode: null, error: `delivery failed: ${reason}`, result: null };
    }
  }

  /**
   * Sends each node of the event the latest collector release of its channel, through the same
   * service call (and so the same authorization) as POST /rest/nodes/1.0/{node_id}/update, with
   * the authority of the rule's tenant: a Session for that tenant holding only node_api.
   */
  private async collectorUpdate(rule: AutomationRule, event: Event): Promise<ActionOutcome> {
    const nodeIds = nodesOf(event);
    if (!nodeIds.length) {
      return {
        ok: false,
        retry: false,
        responseCode: null,
        error: 'the event names no node (data.node_id, data.node_ids or a node_lifecycle subject)',
        result: null,
      };
    }
    const session = actingSession(rule, this.deps.loadScope);
    const nodes: Array<Record<string, unknown>> = [];
    let retry = false;
    let failed = false;
    for (const nodeId of nodeIds) {
      try {
        const update = await this.deps.nodeCommands.update(session, nodeId);
        nodes.push({ node_id: nodeId, update_status: update.updateStatus, version: update.version });
      } catch (error) {
        if (!(error instanceof DomainError)) throw error;
        failed = true;
        // 409 not_connected, 502/504 update_failed: the collector may come back; 4xx otherwise is final.
        if (error.status >= 500 || error.status === 409) retry = true;
        nodes.push({ node_id: nodeId, error: error.code, message: error.message });
      }
    }
    if (!failed) return { ok: true, responseCode: null, result: { nodes } };
    const first = nodes.find((n) => n.error)!;
    return { ok: false, retry, responseCode: null, error: `${first.error}: ${first.message}`, result: { nodes } };
  }
}

/**
 * Who an action acts as: the rule's tenant, with only the node_api scope. Rules run without a
 * caller, and this keeps every authorization decision in Session (the node must be in the rule
 * tenant's tree, exactly as for a caller of that tenant).
 */
export function actingSession(rule: Pick<AutomationRule, 'id' | 'customerId'>, loadScope: (customerId: string) => Promise<TenantScope>): Session {
  return new Session(
    { customerId: rule.customerId, clientId: `automation:${rule.id}`, scopes: [Scopes.nodeApi], expiresAt: Number.MAX_SAFE_INTEGER },
    loadScope,
  );
}
