// Test kit: flow exporters other than softflowd (softflowd.ts), run as their operators run them,
// optionally inside a network namespace (`prefix`: `ip netns exec NS`), exporting to
// 127.0.0.1:`port` there. Each is bounded in time and ends before its function returns.

import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A child process's exit and its output, killed by SIGKILL if it outlives `limitMs`. */
function startBounded(command: string[], limitMs: number) {
  const child = spawn(command[0], command.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const killer = setTimeout(() => child.kill('SIGKILL'), limitMs);
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => (clearTimeout(killer), resolve(code))));
  return { child, exited, output: () => output };
}

async function waitForOutput(process: ReturnType<typeof startBounded>, text: string, limitMs: number): Promise<void> {
  for (let waited = 0; !process.output().includes(text); waited += 50) {
    if (waited > limitMs || process.child.exitCode !== null) throw new Error(`${process.child.spawnargs.join(' ')}: no "${text}" in ${process.output()}`);
    await sleep(50);
  }
}

/**
 * pmacctd reads `pcap` as a savefile and its nfprobe plugin exports the flows as NetFlow v9 or
 * IPFIX. pmacct 1.7 exports only on expiry or shutdown, and with `pcap_savefile_wait` it stays up
 * after the file: once it has read it, SIGINT makes it export and exit.
 */
export async function runPmacctd(dir: string, pcap: string, port: number, version: '9' | '10', prefix: string[] = []): Promise<string> {
  const config = join(dir, `pmacctd-${version}.conf`);
  writeFileSync(
    config,
    [
      'daemonize: false',
      `pcap_savefile: ${pcap}`,
      'pcap_savefile_wait: true',
      'plugins: nfprobe',
      `nfprobe_receiver: 127.0.0.1:${port}`,
      `nfprobe_version: ${version}`,
      'aggregate: src_host, dst_host, src_port, dst_port, proto',
    ].join('\n') + '\n',
  );
  const pmacctd = startBounded([...prefix, 'pmacctd', '-f', config], 20_000);
  // It sleeps 2 s for its plugins before reading a savefile, and says when it has read it.
  await waitForOutput(pmacctd, 'finished reading PCAP capture file', 15_000);
  pmacctd.child.kill('SIGINT');
  const code = await pmacctd.exited;
  await sleep(200); // the last datagrams reach the receiving socket
  // Its core exits 1 when the plugin it signalled ends first ("connection lost ... no more plugins
  // active"), which a loaded machine makes a matter of timing: the plugin's shutdown is what counts.
  const stoppedAsAsked = code === 0 || (code === 1 && pmacctd.output().includes('Shutting down on user request'));
  if (!stoppedAsAsked) throw new Error(`pmacctd failed (${code}): ${pmacctd.output()}`);
  return pmacctd.output();
}

/**
 * fprobe meters `iface` live and exports NetFlow v5; `stop()` lets idle flows leave, then ends it
 * (SIGTERM: it emits the rest of its cache). Resolves once it captures.
 */
export async function startFprobe(iface: string, port: number, prefix: string[] = []): Promise<{ stop(): Promise<string> }> {
  // -l 2: log to stdout and stay in the foreground; -d 1: idle flows out after a second.
  const fprobe = startBounded([...prefix, 'fprobe', '-l', '2', '-i', iface, '-f', 'ip', '-d', '1', '-s', '1', '-n', '5', `127.0.0.1:${port}`], 60_000);
  await waitForOutput(fprobe, 'collector #1', 10_000);
  await sleep(300); // from "collector #1" to the capture loop
  return {
    async stop() {
      // Flows idle for -d 1 leave at the next -s 1 scan; the cache fprobe emits on SIGTERM is, under
      // load, sometimes lost as it exits.
      await sleep(2_500);
      fprobe.child.kill('SIGTERM');
      const code = await fprobe.exited;
      await sleep(200);
      if (code !== 0) throw new Error(`fprobe failed (${code}): ${fprobe.output()}`);
      return fprobe.output();
    },
  };
}
