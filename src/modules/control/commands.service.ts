import type { Session } from '../../auth/session.js';
import { DomainError, type ErrorCode, badRequest, notFound } from '../../errors.js';
import type { Node } from '../../generated/prisma/client.js';
import type { CollectorService } from '../collector/collector.service.js';
import { NodeKind, type NodeService } from '../nodes/nodes.service.js';
import type { NodeStore } from '../nodes/nodes.store.js';
import { compareVersions } from '../../infra/versions.js';
import { ChannelClosed, CommandTimeout, type ControlHub, NotConnected } from './hub.js';
import type { CommandResult } from './protocol.js';

export const LOG_LINES = { min: 1, default: 100, max: 1000 } as const;
export const PPROF_DURATION_S = { default: 10, max: 60 } as const;
export const PPROF_TYPES = ['HEAP', 'ALLOCS', 'GOROUTINE', 'CPU', 'BLOCK', 'MUTEX'] as const;
const TIMED_PROFILES = new Set(['CPU', 'BLOCK', 'MUTEX']);
export const MANAGE_OPERATIONS = ['status', 'logs', 'pull', 'restart', 'upgrade'] as const;
const COMMAND_TIMEOUT_MS = 10_000;

type Failure = { timeout: DomainError; failed: (message: string) => DomainError };

/** Operator commands to live collectors (api-spec.md: diagnostics, pprof, update, manage). */
export class NodeCommandService {
  constructor(
    private readonly nodes: NodeService,
    private readonly nodeStore: NodeStore,
    private readonly hub: ControlHub,
    private readonly collector: CollectorService,
    /** Deadlines are shortened in tests; production uses the documented ones. */
    private readonly timeoutScale = 1,
  ) {}

  async diagnostics(session: Session, nodeId: string, logLines?: number | null) {
    session.assert('nodes.command');
    const node = await this.nodes.get(session, nodeId);
    const lines = clamp(logLines ?? LOG_LINES.default, LOG_LINES.min, LOG_LINES.max);
    const failure = gatewayFailure('diagnostic_pull_failed');
    const data = await this.run(node, 'diagnostics', { log_lines: lines }, COMMAND_TIMEOUT_MS, failure);
    const logs = Array.isArray(data.recent_logs) ? data.recent_logs.filter((l): l is string => typeof l === 'string') : [];
    return {
      nodeId: node.id,
      diagnostics: isObject(data.diagnostics) ? data.diagnostics : null,
      recentLogs: logs.slice(-lines),
    };
  }

  async pprof(session: Session, nodeId: string, type?: string | null, durationS?: number | null) {
    const profileType = (type ?? 'HEAP').toUpperCase();
    if (!(PPROF_TYPES as readonly string[]).includes(profileType)) {
      throw badRequest('invalid_type', `type must be one of ${PPROF_TYPES.join(', ')}`);
    }
    session.assert('nodes.command');
    const node = await this.nodes.get(session, nodeId);
    const duration = TIMED_PROFILES.has(profileType) ? clamp(durationS ?? PPROF_DURATION_S.default, 1, PPROF_DURATION_S.max) : 0;
    const failure = gatewayFailure('pprof_capture_failed');
    const data = await this.run(node, 'pprof', { type: profileType.toLowerCase(), duration_s: duration }, duration * 1000 + 15_000, failure);
    if (typeof data.profile_b64 !== 'string' || data.profile_b64 === '') throw failure.failed('the collector sent no profile');
    return {
      nodeId: node.id,
      type: profileType.toLowerCase(),
      filename: `${node.id}-${profileType.toLowerCase()}.pprof`,
      profileBase64: data.profile_b64,
    };
  }

  /** Sends the latest release of the node's channel, unless it already runs it. */
  async update(session: Session, nodeId: string) {
    session.assert('nodes.command');
    const node = await this.nodes.get(session, nodeId);
    const channel = await this.nodes.channelOf(session, node);
    if (!node.os || !node.arch) throw new DomainError(409, 'not_connected', 'The node has not reported its platform yet');
    const latest = await this.collector.latestRelease(channel, node.os, node.arch);
    // The spec's update answers are 409 and 502 alone: nothing to update to is a failed update.
    if (!latest) throw new DomainError(502, 'update_failed', `No ${channel} release for ${node.os}/${node.arch} to update to`);
    if (node.collectorVersion && compareVersions(node.collectorVersion, latest.version) >= 0) {
      return { nodeId: node.id, updateStatus: 'already_current', version: node.collectorVersion, platform: null };
    }
    const platform = `${node.os}_${node.arch}`;
    const failure: Failure = {
      // 502 either way: the spec gives the update no 504.
      timeout: new DomainError(502, 'update_failed', 'The collector did not confirm the update in time'),
      failed: (message) => new DomainError(502, 'update_failed', `The collector reported: ${message}`),
    };
    const { location } = await this.collector.linkTo(latest);
    await this.run(node, 'update', { version: latest.version, url: location, sha256: latest.sha256, platform, channel }, COMMAND_TIMEOUT_MS, failure);
    return { nodeId: node.id, updateStatus: 'update_sent', version: latest.version, platform };
  }

  /** First-generation nodes: `status`, `logs`, `pull`, `restart`, `upgrade`. */
  async manage(session: Session, nodeId: string, operation?: string | null) {
    session.assert('nodes.command');
    if (!operation || !(MANAGE_OPERATIONS as readonly string[]).includes(operation)) {
      throw badRequest('unknown_operation', `operation must be one of ${MANAGE_OPERATIONS.join(', ')}`);
    }
    const node = await this.nodeStore.find(await session.tenantScope(), nodeId, NodeKind.legacy);
    // The spec answers 404 not_connected for a legacy node that cannot be reached, known or not.
    if (!node) throw notFound('not_connected', `Legacy node ${nodeId} is not connected`);
    const failure: Failure = {
      timeout: new DomainError(504, 'timeout', 'The legacy node did not answer in time'),
      // The spec's one code for a legacy node's request that "timed out or failed".
      failed: (message) => new DomainError(504, 'timeout', `The legacy node could not do it: ${message}`),
    };
    const notConnected = notFound('not_connected', `Legacy node ${nodeId} is not connected`);
    const data = await this.run(node, 'manage', { operation }, COMMAND_TIMEOUT_MS, failure, notConnected);
    return { nodeId: node.id, operation, result: data };
  }

  private async run(
    node: Node,
    name: string,
    args: Record<string, unknown>,
    timeoutMs: number,
    failure: Failure,
    notConnected = new DomainError(409, 'not_connected', `Node ${node.id} is not connected to the control plane`),
  ): Promise<Record<string, unknown>> {
    let result: CommandResult;
    try {
      result = await this.hub.command(node, name, args, timeoutMs * this.timeoutScale);
    } catch (error) {
      if (error instanceof NotConnected || error instanceof ChannelClosed) throw notConnected;
      if (error instanceof CommandTimeout) throw failure.timeout;
      throw error;
    }
    if (!result.ok) {
      if (result.error?.code === 'not_connected') throw notConnected;
      throw failure.failed(result.error?.message ?? 'failed');
    }
    return result.data ?? {};
  }
}

function gatewayFailure(code: ErrorCode): Failure {
  return {
    timeout: new DomainError(504, code, 'The collector did not answer in time'),
    failed: (message) => new DomainError(504, code, `The collector could not do it: ${message}`),
  };
}

const clamp = (value: number, min: number, max: number) => Math.min(max, Math.max(min, Math.trunc(value)));

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
