// How much a kind of conversation moves, how long it lasts and what its bytes
// look like. Sizes are log-normal (median, sigma) with a hard cap: traffic is
// heavy-tailed, but the caps keep any single benign flow from looking like a
// planted transfer (docs/flowgen.md lists them).

/** What the payload bytes are, which bounds their per-packet entropy. */
/** `encoded`: base32/hex text such as data smuggled in DNS labels. */
export type ContentClass = 'encrypted' | 'binary' | 'encoded' | 'text' | 'dns' | 'ntp';

export interface TrafficProfile {
  upMedian: number;
  upSigma: number;
  upMax: number;
  downMedian: number;
  downSigma: number;
  downMax: number;
  durMedian: number; // seconds
  durSigma: number;
  content: ContentClass;
  /** Coefficient of variation of packet inter-arrival gaps: 0 = metronome, >1 = bursty. */
  gapCv: number;
  /** Probability that a flow swaps direction (e.g. a sync client uploading instead of downloading). */
  uploadShare?: number;
}

const KB = 1024;
const MB = 1024 * KB;

function profile(p: TrafficProfile): TrafficProfile {
  return p;
}

export const PROFILES = {
  web: profile({
    upMedian: 1.8 * KB,
    upSigma: 1.0,
    upMax: 2 * MB,
    downMedian: 40 * KB,
    downSigma: 1.8,
    downMax: 60 * MB,
    durMedian: 4,
    durSigma: 1.2,
    content: 'encrypted',
    gapCv: 2.2,
  }),
  api: profile({
    upMedian: 1.2 * KB,
    upSigma: 0.8,
    upMax: 1 * MB,
    downMedian: 6 * KB,
    downSigma: 1.2,
    downMax: 5 * MB,
    durMedian: 0.8,
    durSigma: 1.0,
    content: 'encrypted',
    gapCv: 1.4,
  }),
  websocket: profile({
    upMedian: 6 * KB,
    upSigma: 1.0,
    upMax: 4 * MB,
    downMedian: 25 * KB,
    downSigma: 1.2,
    downMax: 20 * MB,
    durMedian: 120,
    durSigma: 0.6,
    content: 'encrypted',
    gapCv: 2.8,
  }),
  video: profile({
    upMedian: 60 * KB,
    upSigma: 0.8,
    upMax: 4 * MB,
    downMedian: 8 * MB,
    downSigma: 1.3,
    downMax: 400 * MB,
    durMedian: 90,
    durSigma: 0.7,
    content: 'encrypted',
    gapCv: 1.8,
  }),
  media: profile({
    upMedian: 12 * MB,
    upSigma: 0.7,
    upMax: 120 * MB,
    downMedian: 18 * MB,
    downSigma: 0.7,
    downMax: 160 * MB,
    durMedian: 240,
    durSigma: 0.3,
    content: 'encrypted',
    gapCv: 0.4,
  }),
  sync: profile({
    upMedian: 8 * KB,
    upSigma: 1.4,
    upMax: 50 * MB,
    downMedian: 200 * KB,
    downSigma: 2.0,
    downMax: 200 * MB,
    durMedian: 10,
    durSigma: 1.2,
    content: 'encrypted',
    gapCv: 2.0,
    uploadShare: 0.25,
  }),
  download: profile({
    upMedian: 2 * KB,
    upSigma: 0.6,
    upMax: 256 * KB,
    downMedian: 5 * MB,
    downSigma: 1.8,
    downMax: 2048 * MB,
    durMedian: 30,
    durSigma: 1.2,
    content: 'encrypted',
    gapCv: 1.2,
  }),
  packages: profile({
    upMedian: 1.5 * KB,
    upSigma: 0.6,
    upMax: 256 * KB,
    downMedian: 400 * KB,
    downSigma: 1.8,
    downMax: 300 * MB,
    durMedian: 3,
    durSigma: 1.2,
    content: 'text',
    gapCv: 1.2,
  }),
  mail: profile({
    upMedian: 3 * KB,
    upSigma: 1.5,
    upMax: 25 * MB,
    downMedian: 30 * KB,
    downSigma: 1.6,
    downMax: 50 * MB,
    durMedian: 6,
    durSigma: 1.2,
    content: 'encrypted',
    gapCv: 2.0,
  }),
  smtp: profile({
    upMedian: 40 * KB,
    upSigma: 1.5,
    upMax: 25 * MB,
    downMedian: 1.5 * KB,
    downSigma: 0.3,
    downMax: 16 * KB,
    durMedian: 1.5,
    durSigma: 0.8,
    content: 'encrypted',
    gapCv: 1.5,
  }),
  push: profile({
    upMedian: 1 * KB,
    upSigma: 0.6,
    upMax: 256 * KB,
    downMedian: 2 * KB,
    downSigma: 0.9,
    downMax: 1 * MB,
    durMedian: 200,
    durSigma: 0.4,
    content: 'encrypted',
    gapCv: 3.0,
  }),
  ssh: profile({
    upMedian: 20 * KB,
    upSigma: 1.5,
    upMax: 20 * MB,
    downMedian: 60 * KB,
    downSigma: 1.8,
    downMax: 80 * MB,
    durMedian: 180,
    durSigma: 1.0,
    content: 'encrypted',
    gapCv: 3.0,
  }),
  git: profile({
    upMedian: 3 * KB,
    upSigma: 1.0,
    upMax: 20 * MB,
    downMedian: 2 * MB,
    downSigma: 2.0,
    downMax: 500 * MB,
    durMedian: 4,
    durSigma: 1.0,
    content: 'encrypted',
    gapCv: 1.3,
  }),
  heartbeat: profile({
    upMedian: 2 * KB,
    upSigma: 0.3,
    upMax: 64 * KB,
    downMedian: 1 * KB,
    downSigma: 0.3,
    downMax: 64 * KB,
    durMedian: 0.3,
    durSigma: 0.4,
    content: 'encrypted',
    gapCv: 0.8,
  }),
  ldap: profile({
    upMedian: 1 * KB,
    upSigma: 0.8,
    upMax: 512 * KB,
    downMedian: 3 * KB,
    downSigma: 1.2,
    downMax: 4 * MB,
    durMedian: 0.05,
    durSigma: 1.0,
    content: 'binary',
    gapCv: 1.0,
  }),
  kerberos: profile({
    upMedian: 1.5 * KB,
    upSigma: 0.3,
    upMax: 16 * KB,
    downMedian: 1.6 * KB,
    downSigma: 0.3,
    downMax: 16 * KB,
    durMedian: 0.02,
    durSigma: 0.6,
    content: 'binary',
    gapCv: 0.5,
  }),
  smb: profile({
    upMedian: 20 * KB,
    upSigma: 1.8,
    upMax: 200 * MB,
    downMedian: 200 * KB,
    downSigma: 1.5,
    downMax: 500 * MB,
    durMedian: 20,
    durSigma: 1.5,
    content: 'binary',
    gapCv: 2.0,
  }),
  rdp: profile({
    upMedian: 300 * KB,
    upSigma: 1.0,
    upMax: 50 * MB,
    downMedian: 5 * MB,
    downSigma: 1.2,
    downMax: 300 * MB,
    durMedian: 240,
    durSigma: 0.4,
    content: 'encrypted',
    gapCv: 1.6,
  }),
  postgres: profile({
    upMedian: 4 * KB,
    upSigma: 1.5,
    upMax: 50 * MB,
    downMedian: 30 * KB,
    downSigma: 2.0,
    downMax: 300 * MB,
    durMedian: 2,
    durSigma: 1.5,
    content: 'binary',
    gapCv: 1.8,
  }),
  intranet: profile({
    upMedian: 2 * KB,
    upSigma: 1.0,
    upMax: 5 * MB,
    downMedian: 50 * KB,
    downSigma: 1.6,
    downMax: 50 * MB,
    durMedian: 3,
    durSigma: 1.0,
    content: 'encrypted',
    gapCv: 1.8,
  }),
  inboundWeb: profile({
    upMedian: 1.5 * KB,
    upSigma: 0.8,
    upMax: 1 * MB,
    downMedian: 25 * KB,
    downSigma: 1.6,
    downMax: 30 * MB,
    durMedian: 2,
    durSigma: 1.2,
    content: 'encrypted',
    gapCv: 1.8,
  }),
  dns: profile({ upMedian: 0, upSigma: 0, upMax: 0, downMedian: 0, downSigma: 0, downMax: 0, durMedian: 0.012, durSigma: 0.8, content: 'dns', gapCv: 0 }),
  ntp: profile({ upMedian: 48, upSigma: 0, upMax: 48, downMedian: 48, downSigma: 0, downMax: 48, durMedian: 0.03, durSigma: 0.3, content: 'ntp', gapCv: 0 }),
} as const satisfies Record<string, TrafficProfile>;

export type ProfileName = keyof typeof PROFILES;

export type HostOs = 'windows' | 'macos' | 'linux';

/** The client program behind a conversation; each OS names it differently. */
export const CLIENT_PROCESSES = {
  browser: { windows: ['chrome.exe', 'msedge.exe', 'firefox.exe'], macos: ['Google Chrome', 'Safari'], linux: ['chrome', 'firefox'] },
  outlook: { windows: ['outlook.exe'], macos: ['Microsoft Outlook'], linux: ['thunderbird'] },
  teams: { windows: ['ms-teams.exe'], macos: ['Microsoft Teams'], linux: ['chrome'] },
  onedrive: { windows: ['OneDrive.exe'], macos: ['OneDrive'], linux: ['chrome'] },
  slack: { windows: ['slack.exe'], macos: ['Slack'], linux: ['slack'] },
  zoom: { windows: ['Zoom.exe'], macos: ['zoom.us'], linux: ['zoom'] },
  webex: { windows: ['CiscoCollabHost.exe'], macos: ['Webex'], linux: ['chrome'] },
  dropbox: { windows: ['Dropbox.exe'], macos: ['Dropbox'], linux: ['dropbox'] },
  icloud: { windows: ['iCloudDrive.exe'], macos: ['bird', 'apsd'], linux: ['chrome'] },
  spotify: { windows: ['Spotify.exe'], macos: ['Spotify'], linux: ['spotify'] },
  steam: { windows: ['steam.exe'], macos: ['steam_osx'], linux: ['steam'] },
  git: { windows: ['git-remote-https.exe'], macos: ['git-remote-https'], linux: ['git-remote-https'] },
  ssh: { windows: ['ssh.exe'], macos: ['ssh'], linux: ['ssh'] },
  updater: { windows: ['svchost.exe', 'MoUsoCoreWorker.exe'], macos: ['softwareupdated'], linux: ['apt', 'snapd'] },
  dnsClient: { windows: ['svchost.exe'], macos: ['mDNSResponder'], linux: ['systemd-resolved'] },
  timeSync: { windows: ['svchost.exe'], macos: ['timed'], linux: ['chronyd'] },
  edr: { windows: ['CSFalconService.exe'], macos: ['com.crowdstrike.falcon.Agent'], linux: ['falcon-sensor'] },
  smb: { windows: ['System'], macos: ['kernel_task'], linux: ['kworker'] },
  directory: { windows: ['lsass.exe'], macos: ['opendirectoryd'], linux: ['sssd'] },
  rdp: { windows: ['mstsc.exe'], macos: ['Windows App'], linux: ['remmina'] },
  mailer: { windows: ['outlook.exe'], macos: ['Mail'], linux: ['thunderbird'] },
} as const satisfies Record<string, Record<HostOs, readonly string[]>>;

export type ClientKind = keyof typeof CLIENT_PROCESSES;
