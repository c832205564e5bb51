// `diagnostics`: runtime figures and the collector's own latest log lines.

import { type CollectorContext, type CommandHandler, intArg } from './types.js';

export const MAX_LOG_LINES = 1000;
export const DEFAULT_LOG_LINES = 100;

export function diagnosticsCommand(ctx: CollectorContext): CommandHandler {
  return async ({ args }) => {
    const lines = intArg(args.log_lines, DEFAULT_LOG_LINES, 1, MAX_LOG_LINES);
    return { diagnostics: ctx.diagnostics(), recent_logs: ctx.logger.ring.last(lines) };
  };
}
