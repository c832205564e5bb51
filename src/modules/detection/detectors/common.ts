import { MINUTE } from '../episode.js';

/** How far back "rare" looks: an organization is rare when few internal hosts reached it in this long. */
export const RARITY_BASELINE_MS = 24 * 60 * MINUTE;

/** Bucketed detectors join buckets of one subject closer than this into one episode. */
export const EPISODE_GAP_MS = 15 * MINUTE;

/** An episode quieter than this is over (its investigation is closed). */
export const DEFAULT_QUIET_MS = 15 * MINUTE;

const base = (process: string) => process.toLowerCase().replace(/\.exe$/, '');

/** Windows binaries attackers proxy their code through (ATT&CK T1218, T1059). */
const LOLBINS = new Set(['rundll32', 'regsvr32', 'mshta', 'powershell', 'pwsh', 'wscript', 'cscript', 'msiexec', 'certutil', 'bitsadmin', 'installutil']);
export const isLolbin = (process: string) => LOLBINS.has(base(process));

/** Agents that poll their vendor on a timer: a regular cadence from them is expected. */
const AGENTS = new Set(['csfalconservice', 'msmpeng', 'sentinelagent', 'chronyd', 'ntpd', 'w32time', 'osqueryd', 'ccmexec', 'tanclient', 'elastic-agent']);
export const knownAgent = (process: string) => AGENTS.has(base(process));

/** Tools whose name alone says what the traffic is. */
const SCANNERS = new Set(['nmap', 'masscan', 'zmap', 'rustscan', 'advanced_ip_scanner', 'angryip', 'ipscan']);
export const isScanner = (process: string) => SCANNERS.has(base(process));

const PASSWORD_GUESSERS = new Set(['hydra', 'medusa', 'ncrack', 'crowbar', 'patator', 'kerbrute']);
export const isPasswordGuesser = (process: string) => PASSWORD_GUESSERS.has(base(process));

const TRANSFER_TOOLS = new Set(['rclone', 'megacmd', 'megasync', 'winscp', 'restic', 'curl', 'wget', 'filezilla', 'azcopy']);
export const isTransferTool = (process: string) => TRANSFER_TOOLS.has(base(process));

const TUNNEL_TOOLS = new Set(['dnscat', 'dnscat2', 'iodine', 'dns2tcp', 'powershell', 'pwsh']);
export const isTunnelTool = (process: string) => TUNNEL_TOOLS.has(base(process));
