// The socket tables as this kernel writes them (a listener and a connection of this test, over
// IPv4 and IPv6), then lines that are not sockets and tables longer than the limit.
import { readFileSync } from 'node:fs';
import { connect, createServer, type AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { parseSocketTable, plainIp } from './proc-net.js';
import { parsePasswd } from './user-names.js';

const counts = () => ({ lines: 0, overLimit: 0 });

describe('parseSocketTable', () => {
  for (const [host, file] of [
    ['127.0.0.1', 'tcp'],
    ['::1', 'tcp6'],
  ] as const) {
    it(`reads this kernel's ${file} rows: a listener and both ends of a connection`, async () => {
      const server = createServer();
      await new Promise<void>((resolve) => server.listen(0, host, resolve));
      const port = (server.address() as AddressInfo).port;
      const client = connect(port, host);
      await new Promise((resolve) => client.once('connect', resolve));
      const bad = counts();
      const rows = parseSocketTable(readFileSync(`/proc/net/${file}`, 'latin1'), 'TCP', 100_000, bad);
      const clientPort = client.localPort;
      client.destroy();
      server.close();
      expect(bad).toEqual({ lines: 0, overLimit: 0 });
      const listener = rows.find((r) => r.localPort === port && r.unconnected);
      expect(listener).toMatchObject({ transport: 'TCP', localIp: host, remotePort: 0, uid: process.getuid!() });
      expect(listener!.inode).toMatch(/^[1-9]\d*$/);
      expect(rows.find((r) => r.localPort === clientPort && r.remotePort === port)).toMatchObject({ localIp: host, remoteIp: host, unconnected: false });
      expect(rows.find((r) => r.localPort === port && r.remotePort === clientPort)).toMatchObject({ unconnected: false });
    });
  }

  it('counts lines that are not sockets, skips sockets nobody holds, and reads no more than maxRows', () => {
    const header = '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n';
    const good = '   0: 0100007F:0050 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1234 1 0 100 0 0 10 0\n';
    const hostile = [
      'garbage',
      '   1: 0100007G:0050 00000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 1',
      '   1: 0100007F:0050 00000000:0000 0A 00000000:00000000 00:00000000 00000000 x 0 1',
      '   1: 0100007F:0050',
      '\u0000'.repeat(50),
    ].join('\n');
    const bad = counts();
    const timeWait = '   2: 0100007F:0050 0100007F:9C40 06 00000000:00000000 03:00000768 00000000     0        0 0 3 0\n';
    const rows = parseSocketTable(header + timeWait + good + hostile + '\n' + good + good, 'TCP', 2, bad);
    expect(rows).toHaveLength(2);
    expect(rows[0]).toMatchObject({ localIp: '127.0.0.1', localPort: 80, unconnected: true, inode: '1234' });
    expect(bad).toEqual({ lines: 5, overLimit: 1 });
  });

  it('names a v4 peer of a v6 socket as the v4 address a captured packet shows', () => {
    expect(plainIp('::ffff:10.1.2.3')).toBe('10.1.2.3');
    expect(plainIp('::ffff:a01:203')).toBe('::ffff:a01:203');
    expect(plainIp('fe80::1')).toBe('fe80::1');
  });
});

describe('parsePasswd', () => {
  it('maps uids to the first name listing them, skipping comments and broken lines', () => {
    const names = parsePasswd(
      'root:x:0:0:root:/root:/bin/bash\n# c:x:5:\nbroken\nalice:x:1000:1000::/home/alice:/bin/sh\ntwin:x:1000:1000::/:/bin/sh\nodd:x:notanumber:0::/:\n',
    );
    expect([...names]).toEqual([
      [0, 'root'],
      [1000, 'alice'],
    ]);
  });
});
