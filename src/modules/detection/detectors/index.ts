import type { Detector, DetectorKind } from '../episode.js';
import { beaconDetector } from './beacon.js';
import { bruteforceDetector } from './bruteforce.js';
import { dnsTunnelDetector } from './dns-tunnel.js';
import { exfilDetector } from './exfil.js';
import { scanDetector } from './scan.js';

/** Every detector, in the order a run executes them. */
export const DETECTORS: readonly Detector[] = [beaconDetector, exfilDetector, scanDetector, bruteforceDetector, dnsTunnelDetector];

export const detectorOf = (kind: string): Detector | undefined => DETECTORS.find((d) => d.kind === (kind as DetectorKind));

export { BEACON_THRESHOLDS } from './beacon.js';
export { EXFIL_THRESHOLDS } from './exfil.js';
export { SCAN_THRESHOLDS } from './scan.js';
export { BRUTEFORCE_THRESHOLDS } from './bruteforce.js';
export { DNS_TUNNEL_THRESHOLDS } from './dns-tunnel.js';
