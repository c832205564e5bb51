// The UDP listener receiving softflowd's IPFIX export over loopback.

import { afterAll, beforeAll, expect, it } from 'vitest';
import { ExportListener } from './listener.js';
import type { ExportRecord } from './record.js';
import { captureLoopback, runSoftflowd, withTempDir } from '../testing/softflowd.js';

let temp: ReturnType<typeof withTempDir>;
let pcap: string;

beforeAll(async () => {
  temp = withTempDir();
  pcap = await captureLoopback(temp.dir, { tcpPort: 47201, udpPort: 47202, closedPort: 47203, tcpBytesEachWay: 500, udpPayloads: [64], udpFlows: 40 });
}, 30_000);

afterAll(() => temp?.remove());

it('decodes what softflowd sends it and reports datagrams, records, drops and gaps', async () => {
  const records: ExportRecord[] = [];
  const listener = new ExportListener({ customerId: 'c1' }, (r) => records.push(r));
  const port = await listener.listen('127.0.0.1', 0);
  try {
    const verbose = await runSoftflowd(pcap, port, '10');
    const exported = verbose.split('\n').filter((l) => l.startsWith('EXPIRED:')).length;
    const diagnostics = listener.diagnostics();
    expect(records.length).toBe(exported);
    expect(diagnostics).toMatchObject({ records: exported, waitingSets: 0, drops: {}, sequence: { gaps: 0, missing: 0 } });
    expect(diagnostics.datagrams).toBeGreaterThan(0);
    expect(records.some((r) => r.dst.port === 47201 && r.transport.proto === 'TCP')).toBe(true);
  } finally {
    await listener.close();
  }
});

it('says why it cannot bind', async () => {
  const first = new ExportListener({ customerId: 'c1' }, () => undefined);
  const port = await first.listen('127.0.0.1', 0);
  try {
    await expect(new ExportListener({ customerId: 'c1' }, () => undefined).listen('127.0.0.1', port)).rejects.toThrow(/EADDRINUSE/);
  } finally {
    await first.close();
  }
});
