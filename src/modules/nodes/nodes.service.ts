import type { ClientService } from '../../auth/clients.service.js';
import { Scopes } from '../../auth/scopes.js';
import type { Session } from '../../auth/session.js';
import { DomainError, authorizationError, badRequest, missingFields, notFound, unauthorized } from '../../errors.js';
import type { Node } from '../../generated/prisma/client.js';
import { nameProblem } from '../../infra/text.js';
import { tenantOnly } from '../../tenancy/tenant-scope.js';
import type { TenantService } from '../../tenancy/tenants.service.js';
import type { PubSub } from '../../infra/pubsub.js';
import { type EventRecorder, noEvents } from '../events/events.service.js';
import type { ProfileStore } from '../profiles/profiles.store.js';
import { nodeChangedTopic } from './node-events.js';
import { type NodeDetails, NodeDetailsLoader, nodeChannel } from './node-details.js';
import type { NodeStore, ReportedFacts } from './nodes.store.js';
import { isBehind } from '../../infra/versions.js';

export const NodeKind = { managed: 'managed', legacy: 'legacy' } as const;
export const NodeStatus = { active: 'active', pendingApproval: 'pending_approval', staged: 'staged' } as const;

const MAX_TEXT = 256;

export interface ProvisionInput {
  customerId?: string | null;
  machineId?: string | null;
  description?: string | null;
  profileId?: string | null;
}

export interface CollectorFacts {
  machineId?: string | null;
  hostname?: string | null;
  collectorVersion?: string | null;
  updateChannel?: string | null;
  os?: string | null;
  arch?: string | null;
  localIp?: string | null;
  publicIp?: string | null;
  hardware?: unknown;
  services?: unknown;
}

const nodeNotFound = (nodeId: string) =>
  new DomainError(404, 'not_found', `Node ${nodeId} was not found`, { body: { error: 'Node not found', error_type: 'not_found' } });

function optionalText(name: string, value: string | null | undefined): string | undefined {
  if (value === null || value === undefined) return undefined;
  const trimmed = value.trim();
  const problem = trimmed && nameProblem(trimmed, MAX_TEXT);
  if (problem) throw badRequest('invalid_request', `${name} ${problem}`);
  return trimmed || undefined;
}

/** Nodes, their enrolment, and the legacy register path (api-spec.md, Nodes). */
export class NodeService {
  constructor(
    private readonly store: NodeStore,
    private readonly profiles: ProfileStore,
    private readonly clients: ClientService,
    private readonly tenants: TenantService,
    private readonly pubsub: PubSub,
    private readonly events: EventRecorder = noEvents,
  ) {}

  /** A request's batch loader of what node fields need, over this service's store (graphql/loaders.ts). */
  detailsLoader(): NodeDetailsLoader {
    return new NodeDetailsLoader(this.store);
  }

  /**
   * Managed nodes of the caller's tree, or of the one tenant of it `customerId` names (404
   * outside), oldest first, each with what its fields need (NodeDetails).
   */
  async list(session: Session, customerId?: string | null): Promise<Array<{ node: Node; details: NodeDetails }>> {
    return this.store.listOfKind(await session.listScope('nodes.read', customerId), NodeKind.managed);
  }

  async get(session: Session, nodeId: string): Promise<Node> {
    session.assert('nodes.read');
    const node = await this.store.find(await session.tenantScope(), nodeId);
    if (!node) throw nodeNotFound(nodeId);
    return node;
  }

  /** The release line a node of the caller's tree follows (nodeChannel). */
  async channelOf(session: Session, node: Node): Promise<string> {
    return nodeChannel(node, node.profileId ? await this.store.profileChannel(await session.tenantScope(), node.id) : null);
  }

  /**
   * A one-time credential that enrols one collector into `customerId` (the caller or one of its
   * children), optionally bound to a machine id and a profile of that tenant's tree.
   */
  async provision(session: Session, input: ProvisionInput) {
    session.assert('nodes.provision');
    if (!input.customerId?.trim()) throw missingFields(['customer_id']);
    const customerId = input.customerId.trim();
    const machineId = optionalText('machine_id', input.machineId);
    const description = optionalText('description', input.description);
    const profileId = optionalText('profile_id', input.profileId);
    if (!(await session.canSee(customerId))) {
      const caller = await this.tenants.find(session.customerId);
      if (!caller?.isMsp) throw unauthorized('The target customer is not owned by the caller');
      throw notFound('deployment_not_found', `Deployment ${customerId} was not found`);
    }
    const target = await this.tenants.find(customerId);
    if (!target) throw notFound('deployment_not_found', `Deployment ${customerId} was not found`);
    if (profileId) {
      // A parent's profile applies to its children's nodes (wire.md 12).
      const owners = [target.id, target.parentId].filter((id): id is string => id !== null);
      const profile = await this.profiles.find({ customerId: target.id, tenantIds: new Set(owners) }, profileId);
      if (!profile) throw notFound('profile_not_found', `Profile ${profileId} was not found`);
    }
    const client = await this.clients.create({
      customerId,
      scopes: [Scopes.ingest],
      description: description ?? `provisioned for ${machineId ?? 'any machine'}`,
      kind: 'provision',
    });
    await this.store.createEnrolment(await session.tenantScope(), {
      clientId: client.client_id,
      customerId,
      kind: 'provision',
      machineId,
      profileId,
      description,
    });
    return {
      status: 'success',
      accessKey: `${client.client_id}.${client.client_secret}`,
      customerId,
      machineId: machineId ?? null,
      profileId: profileId ?? null,
    };
  }

  /**
   * A collector announcing itself with its enrolment credential's token. The first announcement
   * creates (or re-binds) the node; one credential enrols exactly one node, even when two
   * collectors race with it.
   */
  async register(session: Session, facts: CollectorFacts): Promise<Node> {
    session.assert('collector.register');
    const scope = tenantOnly(session.customerId);
    const enrolment = await this.store.enrolment(scope, session.claims.clientId);
    if (!enrolment) throw authorizationError('This credential cannot enrol a node', { reason: 'not_an_enrolment_credential' });
    const machineId = optionalText('machine_id', facts.machineId) ?? enrolment.machineId;
    if (!machineId) throw missingFields(['machine_id']);
    if (enrolment.machineId && enrolment.machineId !== machineId) {
      throw new DomainError(409, 'machine_mismatch', 'This credential was provisioned for another machine_id');
    }
    const reported = this.reportedFacts(facts);
    if (enrolment.nodeId) {
      const node = await this.store.find(scope, enrolment.nodeId);
      if (node && node.machineId !== machineId) throw new DomainError(409, 'machine_mismatch', 'This credential already enrolled another machine');
      if (node) return this.store.update(scope, node.id, reported);
    }
    const status = enrolment.kind === 'provision' && enrolment.profile?.fleetStaging ? NodeStatus.staged : NodeStatus.active;
    const key = { customerId: enrolment.customerId, kind: NodeKind.managed, machineId };
    const enrolled = await this.store.enrol(scope, enrolment, key, status, reported);
    if (enrolled) {
      await this.events.record({
        customerId: enrolled.customerId,
        topic: 'node_lifecycle',
        kind: 'node_enrolled',
        subject: enrolled.id,
        data: {
          node_id: enrolled.id,
          machine_id: enrolled.machineId,
          hostname: enrolled.hostname,
          status: enrolled.status,
          enrolment: enrolment.kind,
          profile_id: enrolled.profileId,
        },
      });
      return enrolled;
    }
    // Another request with this credential won: answer with its node, as a retry would.
    const winner = await this.store.enrolment(scope, enrolment.clientId);
    if (!winner?.nodeId) throw new DomainError(409, 'enrolment_conflict', 'Enrolment is in progress; retry');
    const node = await this.store.find(scope, winner.nodeId);
    if (!node) throw new Error(`node ${winner.nodeId}, enrolled by ${enrolment.clientId}, is gone`);
    if (node.machineId !== machineId) throw new DomainError(409, 'machine_mismatch', 'This credential already enrolled another machine');
    return node;
  }

  /** Promotes a staged (or pending) node to active; an active node stays as it is. */
  async activate(session: Session, nodeId: string): Promise<Node> {
    session.assert('nodes.activate');
    const node = await this.get(session, nodeId);
    if (node.status === NodeStatus.active) return node;
    const activated = await this.store.update(await session.tenantScope(), node.id, { status: NodeStatus.active });
    await this.pubsub.publish(nodeChangedTopic, { nodeId: node.id });
    await this.events.record({
      customerId: node.customerId,
      topic: 'node_lifecycle',
      kind: 'node_activated',
      subject: node.id,
      data: { node_id: node.id, hostname: node.hostname, previous_status: node.status },
    });
    return activated;
  }

  /** Managed nodes of the caller's tree behind the latest release of their channel. */
  async outdated(session: Session): Promise<Array<{ node: Node; latestVersion: string; channel: string }>> {
    return (await this.list(session)).flatMap(({ node, details: { latestVersion, channel } }) =>
      latestVersion && isBehind(node.collectorVersion, latestVersion) ? [{ node, latestVersion, channel }] : [],
    );
  }

  /** Legacy first-generation nodes: the existing or a new node for machine_id + hostname. */
  async legacyRegister(session: Session, input: { machineId?: string | null; hostname?: string | null }): Promise<Node> {
    session.assert('collector.register');
    const absent = [!input.machineId?.trim() && 'machine_id', !input.hostname?.trim() && 'hostname'].filter((f): f is string => Boolean(f));
    if (absent.length) throw missingFields(absent);
    const machineId = optionalText('machine_id', input.machineId)!;
    const hostname = optionalText('hostname', input.hostname)!;
    const key = { customerId: session.customerId, kind: NodeKind.legacy, machineId };
    const { node, created } = await this.store.upsert(tenantOnly(session.customerId), key, hostname, NodeStatus.active);
    if (!created) return node;
    await this.events.record({
      customerId: node.customerId,
      topic: 'node_lifecycle',
      kind: 'node_enrolled',
      subject: node.id,
      data: { node_id: node.id, machine_id: machineId, hostname, status: node.status, enrolment: 'legacy', profile_id: null },
    });
    return node;
  }

  private reportedFacts(facts: CollectorFacts): ReportedFacts {
    const text = (name: string, v: string | null | undefined) => optionalText(name, v);
    return {
      hostname: text('hostname', facts.hostname),
      collectorVersion: text('collector_version', facts.collectorVersion),
      updateChannel: text('update_channel', facts.updateChannel),
      os: text('os', facts.os),
      arch: text('arch', facts.arch),
      localIp: text('local_ip', facts.localIp),
      publicIp: text('public_ip', facts.publicIp),
      hardware: facts.hardware === undefined ? undefined : (facts.hardware as object),
      reportedServices: facts.services === undefined ? undefined : (facts.services as object),
      lastSeenAt: new Date(),
    };
  }
}
