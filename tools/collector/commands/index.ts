// The commands a collector answers (collector-protocol.md 2.3).

import { diagnosticsCommand } from './diagnostics.js';
import { manageCommand } from './manage.js';
import { pprofCommand } from './pprof.js';
import type { CollectorContext, CommandHandler } from './types.js';
import { updateCommand } from './update.js';

export { CommandError, type CollectorContext, type CommandHandler, type CommandRequest } from './types.js';

export function createCommands(ctx: CollectorContext): Map<string, CommandHandler> {
  return new Map([
    ['diagnostics', diagnosticsCommand(ctx)],
    ['pprof', pprofCommand(ctx)],
    ['update', updateCommand(ctx)],
    ['manage', manageCommand(ctx)],
  ]);
}
