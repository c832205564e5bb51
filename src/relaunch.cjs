/**
 * Runs this same command again in a new process with another environment and more flags, for
 * settings that are read only when a process starts (src/start.cjs). To whoever started it, this
 * process still is the service: signals are passed on, Node's message channel is relayed both
 * ways, and it ends as the new process ends, with its exit code or signal.
 */
'use strict';

const { spawn } = require('node:child_process');

/** Set in the new process: the pid of the launcher it answers to. */
const LAUNCHER_PID = 'SERVICE_LAUNCHER_PID';
const PASSED_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'];
/** How often the new process checks that its launcher is still there. */
const LAUNCHER_CHECK_MS = 1000;

/** `flags`: Node and V8 options the new process gets besides this one's. */
function relaunch(env, flags = []) {
  const ipc = typeof process.send === 'function';
  const child = spawn(process.execPath, [...flags, ...process.execArgv, ...process.argv.slice(1)], {
    env: { ...env, [LAUNCHER_PID]: String(process.pid) },
    stdio: ipc ? ['inherit', 'inherit', 'inherit', 'ipc'] : 'inherit',
  });
  for (const signal of PASSED_SIGNALS) process.on(signal, () => child.kill(signal));
  if (ipc) {
    child.on('message', (message) => process.send(message));
    process.on('message', (message) => child.connected && child.send(message));
    process.on('disconnect', () => child.connected && child.disconnect());
  }
  child.on('error', (error) => {
    console.error(error);
    process.exit(1);
  });
  child.on('exit', (code, signal) => {
    if (code !== null) process.exit(code);
    // Ended by a signal: end the same way, so that the caller sees what the service saw.
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
  });
}

/**
 * In a relaunched process: a launcher killed outright (SIGKILL) cannot pass the signal on, so the
 * service stops itself as on SIGTERM once its launcher is gone, instead of holding the port and
 * the data directory with nobody to stop it.
 */
function stopWithLauncher() {
  const launcher = Number(process.env[LAUNCHER_PID]);
  // Not for processes this one starts: their launcher is this one.
  delete process.env[LAUNCHER_PID];
  if (!launcher) return;
  const check = setInterval(() => {
    if (process.ppid === launcher) return;
    clearInterval(check);
    process.kill(process.pid, 'SIGTERM');
  }, LAUNCHER_CHECK_MS);
  check.unref();
}

module.exports = { relaunch, stopWithLauncher };
