import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));

/**
 * Runs `npm run -s admin -- ...` as an operator would, and parses its JSON output. `cli`: Node's
 * arguments that start it (default the TypeScript source through tsx; a build's cli.js).
 */
export function adminCli(
  args: string[],
  env: Record<string, string>,
  cli = ['--import', 'tsx', 'src/admin/cli.ts'],
): Promise<{ code: number; json: any; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [...cli, ...args], { cwd: root, env: { ...process.env, ...env }, timeout: 120_000 }, (error, stdout, stderr) => {
      let json: unknown;
      try {
        json = JSON.parse(stdout);
      } catch {
        json = undefined;
      }
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, json, stdout, stderr });
    });
  });
}
