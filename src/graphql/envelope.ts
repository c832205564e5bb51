/**
 * The one way into GraphQL execution, for its three doors: yoga (`/graphql`), graphql-ws
 * (subscriptions on `/graphql`) and rest-compat (`/rest`, `/search`). It owns what every door
 * must do alike: the request's context (`createRequestContext`), refusing text holding NUL
 * (nul-text.ts), the limits on documents from outside (request-bodies.ts, document-limits.ts),
 * what a caller sees of an error (error-codes.ts), the operation metric, the audit log of every
 * mutation (audited-mutations.ts), and the compiled operations rest-compat runs
 * (compiled-operations.ts).
 *
 * rest-compat's documents are our own (schema/operations): they pass no document limits, and the
 * values of a REST request are checked, NUL included, against the operation's variable types
 * with the REST field names (rest-compat/variables.ts) before they reach `run`.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { type DocumentNode, type ExecutionArgs, type ExecutionResult, GraphQLError, specifiedRules, validate } from 'graphql';
import { type Context, type HttpExchange, RequestAuth } from '../context.js';
import { clientAddress } from '../infra/client-address.js';
import type { Prisma } from '../infra/database.js';
import type { Logger } from '../infra/logger.js';
import { sessionCookieOf } from '../modules/users/session-cookie.js';
import type { Services } from '../services.js';
import { type RanOperation, auditedMutations, mutationCalls } from './audited-mutations.js';
import { type RunOperation, compiledOperations } from './compiled-operations.js';
import { limitDocuments, parseWithinLimits } from './document-limits.js';
import { presentError } from './error-codes.js';
import { Loaders } from './loaders.js';
import { noNulTextLiterals, nulTextAt, nulTextError, refuseNulText } from './nul-text.js';
import { operationMetrics } from './operation-metrics.js';
import { rawJsonResults } from './raw-json-results.js';
import { limitRequestBodies } from './request-bodies.js';
import { schema } from './schema.js';

/** What an audit entry keeps of a User-Agent header. */
const MAX_USER_AGENT = 500;

/** graphql-js's rules, and no string literal holding NUL. */
const validationRules = [...specifiedRules, noNulTextLiterals];

/** What a graphql-ws client sends to start an operation. */
export interface SubscribePayload {
  query: string;
  operationName?: string | null;
  variables?: Record<string, unknown> | null;
}

export class GraphqlEnvelope {
  readonly schema = schema;
  private readonly runCompiled: RunOperation = compiledOperations(schema);
  private readonly reportBug = (error: unknown) => this.deps.logger.error('graphql.unhandled_error', { error });

  constructor(private readonly deps: { prisma: Prisma; services: Services; trustedProxies: ReadonlySet<string>; logger: Logger }) {}

  /**
   * What every resolver sees for one request: its caller is resolved lazily from `authorization`,
   * or, at the doors that take one (`cookies`: GraphQL and graphql-ws, never REST), from the
   * session cookie.
   */
  createRequestContext(authorization: string | null, requestId: string, req: IncomingMessage, cookies?: { csrfSafe: boolean; http?: HttpExchange }): Context {
    const { prisma, services, trustedProxies } = this.deps;
    const value = cookies ? sessionCookieOf(req.headers.cookie) : null;
    const cookie = value === null ? undefined : { value, csrfSafe: cookies!.csrfSafe, authenticate: (v: string) => services.signIn.authenticate(v) };
    return {
      requestId,
      origin: { address: clientAddress(req, trustedProxies) },
      userAgent: req.headers['user-agent']?.slice(0, MAX_USER_AGENT) ?? null,
      prisma,
      services,
      auth: new RequestAuth(authorization, (header) => services.auth.authenticate(header), cookie),
      loaders: new Loaders(services.nodes),
      ...(cookies?.http && { http: cookies.http }),
    };
  }

  /**
   * Whether a WebSocket upgrade comes from a page of this service (or from no page at all: a
   * program sends no Origin). Browsers send cookies with cross-site upgrades too, and a WebSocket
   * cannot carry the CSRF header: so a session cookie counts only on an upgrade from here.
   */
  sameOrigin(req: IncomingMessage): boolean {
    const origin = req.headers.origin;
    if (origin === undefined) return true;
    try {
      const host = new URL(origin).host;
      return host === req.headers.host || host === new URL(this.deps.services.links.base()).host;
    } catch {
      return false;
    }
  }

  /** The session cookie a graphql-ws connection may use: its upgrade's, when from this origin. */
  socketCookie(req: IncomingMessage): string | null {
    return this.sameOrigin(req) ? sessionCookieOf(req.headers.cookie) : null;
  }

  /** yoga: bodies, NUL, raw JSON pages, document limits, metrics and the audit log, in this order. */
  yogaPlugins() {
    return [limitRequestBodies(), refuseNulText(), rawJsonResults(), limitDocuments(), operationMetrics(), auditedMutations(this.recordMutations)];
  }

  /**
   * Every door, once an operation has run: its mutation fields go to the audit log with the caller
   * the operation resolved. Off the request path (the writer batches); a failure is only logged.
   */
  readonly recordMutations = (ran: RanOperation, result: ExecutionResult | AsyncIterable<unknown>): void => {
    const calls = mutationCalls(ran, result);
    if (calls.length === 0) return;
    const context = ran.contextValue as Context;
    void this.deps.services.audit.recordMutations(calls, context.auth.known(), {
      requestId: context.requestId,
      clientAddress: context.origin.address,
      userAgent: context.userAgent,
    });
  };

  /** What a GraphQL caller (yoga, graphql-ws) sees of `error`: its code, or a masked bug that is logged. */
  readonly maskError = (error: unknown): GraphQLError => presentError(error, this.reportBug);

  /**
   * graphql-ws: a started operation checked as yoga checks a request (NUL, limits, validation),
   * as its execution arguments or the errors it is refused with. graphql-ws would close the
   * socket (4500) on a document that fails to parse: it is parsed here, and refused in an error
   * message like any other invalid one.
   */
  subscription(payload: SubscribePayload, authorization: string | null, req: IncomingMessage): ExecutionArgs | readonly GraphQLError[] {
    const nul = nulTextAt(payload.variables);
    if (nul) return [nulTextError(nul)];
    let document: DocumentNode;
    try {
      document = parseWithinLimits(payload.query);
    } catch (error) {
      if (error instanceof GraphQLError) return [error];
      throw error;
    }
    const invalid = validate(schema, document, validationRules);
    if (invalid.length > 0) return invalid;
    const contextValue = this.createRequestContext(authorization, randomUUID(), req, { csrfSafe: this.sameOrigin(req) });
    return { schema, document, operationName: payload.operationName, variableValues: payload.variables, contextValue };
  }

  /**
   * Every event of a subscription runs with the one context it started with: each event starts
   * from fresh loaders, so none shows a row an earlier event cached.
   */
  nextEvent(context: Context): void {
    context.loaders = new Loaders(this.deps.services.nodes);
  }

  /** rest-compat: one of our operations, compiled once, for the caller `req` authorizes. */
  readonly run = async (document: DocumentNode, variables: Record<string, unknown>, req: IncomingMessage, requestId: string): Promise<ExecutionResult> => {
    const contextValue = this.createRequestContext(req.headers.authorization ?? null, requestId, req);
    const result = await this.runCompiled(document, variables, contextValue);
    this.recordMutations({ document, variableValues: variables, contextValue }, result);
    return result;
  };
}
