// `manage`: the operations legacy first-generation nodes answer (api-spec.md, Nodes ▸ manage),
// each mapped onto what this collector really has.

import { install } from './update.js';
import { CommandError, type CollectorContext, type CommandHandler, intArg } from './types.js';

export const OPERATIONS = ['status', 'logs', 'pull', 'restart', 'upgrade'] as const;

export function manageCommand(ctx: CollectorContext): CommandHandler {
  return async ({ args, deadlineMs }) => {
    const operation = String(args.operation ?? '')
      .trim()
      .toLowerCase();
    switch (operation) {
      case 'status':
        return { operation, ...ctx.status() };
      case 'logs': {
        const lines = intArg(args.lines ?? args.log_lines, 200, 1, 1000);
        return { operation, lines: ctx.logger.ring.last(lines) };
      }
      case 'pull': {
        // Pulls what a node needs from the service: a fresh token (the key is still good) and
        // the configuration in effect.
        const token = await ctx.refreshCredential();
        return { operation, credential: 'valid', token_expires_at: token.expires_at, config: ctx.config() ?? null, version: ctx.version() };
      }
      case 'restart':
        ctx.restartControl('manage restart');
        return { operation, restarting: true, version: ctx.version() };
      case 'upgrade':
        if (args.version === undefined) return { operation, version: ctx.version(), status: 'no_version_given' };
        return { operation, ...(await install(ctx, args, deadlineMs)) };
      default:
        throw new CommandError('unknown_operation', `unknown operation ${JSON.stringify(args.operation ?? null)}; one of ${OPERATIONS.join(', ')}`);
    }
  };
}
