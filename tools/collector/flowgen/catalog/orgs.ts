// External organizations the benign mix talks to, in popularity order (rank 1
// first; the generator weights them by Zipf over this order). ASNs and
// prefixes are the organizations' real, publicly announced ones (one
// representative prefix each). SaaS that runs on a cloud keeps the cloud's AS
// in geo (asOrg) and its own name in ctx.organization, as an enrichment
// pipeline that classifies by SNI/DNS would.

import type { PlaceName } from './places.js';
import type { ClientKind, ProfileName } from './traffic.js';

export type AppName =
  | 'HTTPS'
  | 'HTTP'
  | 'QUIC'
  | 'DNS'
  | 'NTP'
  | 'SSH'
  | 'SMTP'
  | 'IMAPS'
  | 'APNS'
  | 'ZOOM'
  | 'WEBEX'
  | 'SMB'
  | 'LDAP'
  | 'KERBEROS'
  | 'RDP'
  | 'POSTGRESQL'
  | 'UNKNOWN';

export interface ServiceDef {
  app: AppName;
  proto: 'TCP' | 'UDP';
  port: number;
  weight: number;
  profile: ProfileName;
  client: ClientKind;
  fqdns: readonly string[];
  /** Share of TLS sessions negotiated as TLS 1.3; absent for protocols without TLS. */
  tls13?: number;
  /** Fixed anycast addresses (public resolvers) instead of addresses from the org prefix. */
  anycast?: { ips: readonly string[]; network: string };
}

/** Who reaches an org: work = managed hosts, consumer = guest Wi-Fi, infra = only the resolvers. */
export type Audience = 'work' | 'consumer' | 'both' | 'infra';

export interface OrgDef {
  name: string;
  asn: number;
  /** The AS holder when it differs from the service organization. */
  asOrg?: string;
  cidr: string;
  place: PlaceName;
  industry: string;
  audience: Audience;
  services: readonly ServiceDef[];
}

type ServiceOptions = Partial<Pick<ServiceDef, 'tls13' | 'anycast'>>;

function https(fqdns: string[], profile: ProfileName, client: ClientKind, weight = 1, options: ServiceOptions = {}): ServiceDef {
  return { app: 'HTTPS', proto: 'TCP', port: 443, weight, profile, client, fqdns, tls13: 0.9, ...options };
}

function quic(fqdns: string[], profile: ProfileName, client: ClientKind, weight = 1): ServiceDef {
  return { app: 'QUIC', proto: 'UDP', port: 443, weight, profile, client, fqdns, tls13: 1 };
}

function service(
  app: AppName,
  proto: 'TCP' | 'UDP',
  port: number,
  fqdns: string[],
  profile: ProfileName,
  client: ClientKind,
  weight = 1,
  options: ServiceOptions = {},
): ServiceDef {
  return { app, proto, port, weight, profile, client, fqdns, ...options };
}

const AMAZON = { asn: 16509, asOrg: 'Amazon.com, Inc.' };

export const BENIGN_ORGS: readonly OrgDef[] = [
  {
    name: 'Google LLC',
    asn: 15169,
    cidr: '142.250.0.0/15',
    place: 'mountainView',
    industry: 'Technology',
    audience: 'both',
    services: [
      https(['www.google.com', 'mail.google.com', 'docs.google.com', 'apis.google.com', 'fonts.gstatic.com', 'www.gstatic.com'], 'web', 'browser', 5),
      https(['drive.google.com', 'clients6.google.com'], 'sync', 'browser', 1),
      quic(['www.youtube.com', 'rr3---sn-ab5l6nrs.googlevideo.com', 'rr5---sn-q4flrnes.googlevideo.com'], 'video', 'browser', 2),
      quic(['www.google.com', 'play.google.com'], 'web', 'browser', 2),
    ],
  },
  {
    name: 'Microsoft Corporation',
    asn: 8075,
    cidr: '52.96.0.0/14',
    place: 'redmond',
    industry: 'Technology',
    audience: 'work',
    services: [
      https(['outlook.office365.com', 'outlook.office.com'], 'mail', 'outlook', 4),
      https(['login.microsoftonline.com', 'graph.microsoft.com', 'aadcdn.msftauth.net'], 'api', 'browser', 3),
      https(['teams.microsoft.com', 'presence.teams.microsoft.com'], 'websocket', 'teams', 3),
      https(['examplecorp.sharepoint.com', 'examplecorp-my.sharepoint.com'], 'sync', 'onedrive', 2),
      https(['settings-win.data.microsoft.com', 'v10.events.data.microsoft.com'], 'api', 'updater', 1),
      https(['download.windowsupdate.com', 'dl.delivery.mp.microsoft.com'], 'download', 'updater', 0.5),
      service('NTP', 'UDP', 123, ['time.windows.com'], 'ntp', 'timeSync', 0),
    ],
  },
  {
    name: 'Amazon.com, Inc.',
    asn: 16509,
    cidr: '52.216.0.0/15',
    place: 'ashburn',
    industry: 'Cloud',
    audience: 'both',
    services: [
      https(['s3.amazonaws.com', 'examplecorp-assets.s3.amazonaws.com'], 'download', 'browser', 1),
      https(['www.amazon.com', 'm.media-amazon.com', 'images-na.ssl-images-amazon.com'], 'web', 'browser', 3),
      https(['sts.amazonaws.com', 'dynamodb.us-east-1.amazonaws.com', 'console.aws.amazon.com'], 'api', 'browser', 2),
    ],
  },
  {
    name: 'Cloudflare, Inc.',
    asn: 13335,
    cidr: '104.16.0.0/13',
    place: 'sanFrancisco',
    industry: 'Content Delivery',
    audience: 'both',
    services: [
      https(['cdnjs.cloudflare.com', 'www.cloudflare.com', 'discord.com', 'www.canva.com', 'challenges.cloudflare.com'], 'web', 'browser', 5),
      quic(['cdnjs.cloudflare.com', 'discord.com'], 'web', 'browser', 2),
    ],
  },
  {
    name: 'Slack Technologies, LLC',
    ...AMAZON,
    cidr: '3.120.0.0/14',
    place: 'ashburn',
    industry: 'Software',
    audience: 'work',
    services: [
      https(['wss-primary.slack.com', 'wss-backup.slack.com'], 'websocket', 'slack', 3),
      https(['app.slack.com', 'edgeapi.slack.com'], 'api', 'slack', 3),
      https(['files.slack.com', 'slack-edge.com'], 'web', 'slack', 1),
    ],
  },
  {
    name: 'Akamai Technologies, Inc.',
    asn: 20940,
    cidr: '23.32.0.0/11',
    place: 'cambridge',
    industry: 'Content Delivery',
    audience: 'both',
    services: [
      https(['e1234.dscb.akamaiedge.net', 'a248.e.akamai.net', 'www.apple.com', 'www.usbank.com'], 'web', 'browser', 4),
      https(['swcdn.apple.com', 'download.nvidia.com'], 'download', 'updater', 1),
    ],
  },
  {
    name: 'Zoom Video Communications, Inc.',
    asn: 30103,
    cidr: '170.114.0.0/16',
    place: 'sanJose',
    industry: 'Software',
    audience: 'work',
    services: [
      https(['zoom.us', 'us05web.zoom.us', 'us05st1.zoom.us'], 'api', 'zoom', 3),
      service('ZOOM', 'UDP', 8801, ['zoomsjc144-123-38mmr.sjc.zoom.us'], 'media', 'zoom', 1),
    ],
  },
  {
    name: 'Meta Platforms, Inc.',
    asn: 32934,
    cidr: '157.240.0.0/16',
    place: 'menloPark',
    industry: 'Social Media',
    audience: 'consumer',
    services: [
      https(['www.facebook.com', 'static.xx.fbcdn.net', 'www.instagram.com', 'web.whatsapp.com'], 'web', 'browser', 3),
      quic(['scontent.xx.fbcdn.net', 'video.xx.fbcdn.net'], 'video', 'browser', 1),
    ],
  },
  {
    name: 'Apple Inc.',
    asn: 714,
    cidr: '17.248.128.0/18',
    place: 'cupertino',
    industry: 'Technology',
    audience: 'both',
    services: [
      https(['gateway.icloud.com', 'p52-contacts.icloud.com', 'www.icloud.com'], 'sync', 'icloud', 3),
      https(['gsp-ssl.ls.apple.com', 'init.itunes.apple.com', 'gs.apple.com'], 'api', 'updater', 2),
      service('APNS', 'TCP', 5223, ['courier.push.apple.com'], 'push', 'icloud', 2, { tls13: 0.8 }),
    ],
  },
  {
    name: 'GitHub, Inc.',
    asn: 36459,
    cidr: '140.82.112.0/20',
    place: 'sanFrancisco',
    industry: 'Software',
    audience: 'work',
    services: [
      https(['github.com', 'api.github.com', 'collector.github.com'], 'web', 'browser', 3),
      https(['github.com', 'codeload.github.com'], 'git', 'git', 2),
      service('SSH', 'TCP', 22, ['github.com'], 'git', 'ssh', 1),
    ],
  },
  {
    name: 'Fastly, Inc.',
    asn: 54113,
    cidr: '151.101.0.0/16',
    place: 'sanFrancisco',
    industry: 'Content Delivery',
    audience: 'both',
    services: [
      https(['registry.npmjs.org', 'pypi.org', 'files.pythonhosted.org', 'cdn.jsdelivr.net'], 'packages', 'browser', 2),
      https(['www.reddit.com', 'www.nytimes.com', 'www.theguardian.com', 'i.imgur.com'], 'web', 'browser', 3),
    ],
  },
  {
    name: 'CrowdStrike, Inc.',
    ...AMAZON,
    cidr: '52.40.0.0/14',
    place: 'seattle',
    industry: 'Security',
    audience: 'work',
    services: [https(['ts01-b.cloudsink.net', 'lfodown01-b.cloudsink.net'], 'heartbeat', 'edr', 1)],
  },
  {
    name: 'Salesforce, Inc.',
    asn: 14340,
    cidr: '136.146.0.0/15',
    place: 'sanFrancisco',
    industry: 'Software',
    audience: 'work',
    services: [https(['login.salesforce.com', 'examplecorp.my.salesforce.com', 'examplecorp.lightning.force.com'], 'web', 'browser', 1)],
  },
  {
    name: 'Dropbox, Inc.',
    asn: 19679,
    cidr: '162.125.0.0/16',
    place: 'sanFrancisco',
    industry: 'Software',
    audience: 'both',
    services: [
      https(['client.dropbox.com', 'bolt.dropbox.com'], 'push', 'dropbox', 1),
      https(['content.dropboxapi.com', 'www.dropbox.com'], 'sync', 'dropbox', 2),
    ],
  },
  {
    name: 'Okta, Inc.',
    ...AMAZON,
    cidr: '44.192.0.0/11',
    place: 'ashburn',
    industry: 'Security',
    audience: 'work',
    services: [https(['examplecorp.okta.com', 'ok12static.oktacdn.com'], 'api', 'browser', 1)],
  },
  {
    name: 'Atlassian Pty Ltd',
    ...AMAZON,
    cidr: '18.184.0.0/15',
    place: 'ashburn',
    industry: 'Software',
    audience: 'work',
    services: [https(['examplecorp.atlassian.net', 'api.atlassian.com', 'bitbucket.org'], 'web', 'browser', 1)],
  },
  {
    name: 'LinkedIn Corporation',
    asn: 14413,
    cidr: '108.174.0.0/20',
    place: 'sunnyvale',
    industry: 'Social Media',
    audience: 'both',
    services: [https(['www.linkedin.com', 'static.licdn.com', 'media.licdn.com'], 'web', 'browser', 1)],
  },
  {
    name: 'Netflix, Inc.',
    asn: 2906,
    cidr: '45.57.0.0/17',
    place: 'sanJose',
    industry: 'Media',
    audience: 'consumer',
    services: [https(['ipv4-c001-sjc002-ix.1.oca.nflxvideo.net', 'www.netflix.com'], 'video', 'browser', 1)],
  },
  {
    name: 'Cisco Systems, Inc.',
    asn: 13445,
    cidr: '170.72.0.0/16',
    place: 'sanJose',
    industry: 'Technology',
    audience: 'work',
    services: [
      https(['examplecorp.webex.com', 'idbroker.webex.com'], 'api', 'webex', 2),
      service('WEBEX', 'UDP', 9000, ['mmsjc1.webex.com'], 'media', 'webex', 1),
    ],
  },
  {
    name: 'Twitter, Inc.',
    asn: 13414,
    cidr: '104.244.40.0/21',
    place: 'sanFrancisco',
    industry: 'Social Media',
    audience: 'consumer',
    services: [https(['x.com', 'api.x.com', 'pbs.twimg.com', 'abs.twimg.com'], 'web', 'browser', 1)],
  },
  {
    name: 'Canonical Group Limited',
    asn: 41231,
    cidr: '91.189.88.0/21',
    place: 'london',
    industry: 'Software',
    audience: 'work',
    services: [
      service('HTTP', 'TCP', 80, ['archive.ubuntu.com', 'security.ubuntu.com'], 'packages', 'updater', 3),
      https(['api.snapcraft.io', 'motd.ubuntu.com'], 'api', 'updater', 1),
      // Weight 0: NTP comes from the polling schedule (scheduled.ts), never from the load-driven mix.
      service('NTP', 'UDP', 123, ['ntp.ubuntu.com'], 'ntp', 'timeSync', 0),
    ],
  },
  {
    name: 'Oracle Corporation',
    asn: 31898,
    cidr: '129.146.0.0/16',
    place: 'ashburn',
    industry: 'Cloud',
    audience: 'work',
    services: [https(['objectstorage.us-ashburn-1.oraclecloud.com', 'www.oracle.com', 'javadl.oracle.com'], 'web', 'browser', 1)],
  },
  {
    name: 'DigitalOcean, LLC',
    asn: 14061,
    cidr: '159.65.0.0/16',
    place: 'newYork',
    industry: 'Cloud',
    audience: 'both',
    services: [https(['status.example-saas.io', 'api.tinyhelpdesk.com', 'app.formbee.io'], 'api', 'browser', 1)],
  },
  {
    name: 'Spotify AB',
    asn: 8403,
    cidr: '193.235.232.0/22',
    place: 'stockholm',
    industry: 'Media',
    audience: 'consumer',
    services: [https(['audio-ak-spotify-com.akamaized.net', 'spclient.wg.spotify.com', 'apresolve.spotify.com'], 'video', 'spotify', 1)],
  },
  {
    name: 'Twilio Inc. (SendGrid)',
    asn: 11377,
    cidr: '167.89.0.0/17',
    place: 'denver',
    industry: 'Software',
    audience: 'work',
    services: [service('SMTP', 'TCP', 587, ['smtp.sendgrid.net'], 'smtp', 'mailer', 2, { tls13: 0.6 }), https(['api.sendgrid.com'], 'api', 'browser', 1)],
  },
  {
    name: 'Hetzner Online GmbH',
    asn: 24940,
    cidr: '88.198.0.0/16',
    place: 'falkenstein',
    industry: 'Cloud',
    audience: 'both',
    services: [
      https(['mirror.hetzner.com', 'download.example-oss.org', 'nextcloud.example-friend.de'], 'packages', 'browser', 2),
      service('SSH', 'TCP', 22, ['dev-box.example-personal.de'], 'ssh', 'ssh', 1),
    ],
  },
  {
    name: 'OVH SAS',
    asn: 16276,
    cidr: '51.68.0.0/16',
    place: 'roubaix',
    industry: 'Cloud',
    audience: 'both',
    services: [https(['www.example-forum.fr', 'cdn.example-shop.eu', 'api.statuspage-mirror.net'], 'web', 'browser', 1)],
  },
  {
    name: 'Wikimedia Foundation Inc.',
    asn: 14907,
    cidr: '208.80.152.0/22',
    place: 'ashburn',
    industry: 'Nonprofit',
    audience: 'both',
    services: [https(['en.wikipedia.org', 'upload.wikimedia.org'], 'web', 'browser', 1)],
  },
  {
    name: 'Proofpoint, Inc.',
    asn: 26211,
    cidr: '148.163.128.0/19',
    place: 'sunnyvale',
    industry: 'Security',
    audience: 'work',
    services: [
      service('SMTP', 'TCP', 25, ['mx0a-00123456.pphosted.com', 'mx0b-00123456.pphosted.com'], 'smtp', 'mailer', 2, { tls13: 0.5 }),
      https(['urldefense.com'], 'api', 'browser', 1),
    ],
  },
  {
    name: 'Box, Inc.',
    asn: 33011,
    cidr: '74.112.184.0/21',
    place: 'sanJose',
    industry: 'Software',
    audience: 'work',
    services: [https(['app.box.com', 'upload.box.com', 'dl.boxcloud.com'], 'sync', 'browser', 1)],
  },
  {
    name: 'Automattic, Inc',
    asn: 2635,
    cidr: '192.0.64.0/18',
    place: 'sanFrancisco',
    industry: 'Media',
    audience: 'both',
    services: [https(['wordpress.com', 'i0.wp.com', 'pixel.wp.com'], 'web', 'browser', 1)],
  },
  {
    name: 'Linode, LLC',
    asn: 63949,
    cidr: '45.79.0.0/16',
    place: 'newark',
    industry: 'Cloud',
    audience: 'both',
    services: [https(['api.example-monitor.io', 'hooks.example-ci.dev'], 'api', 'browser', 1)],
  },
  {
    name: 'Yahoo Inc.',
    asn: 10310,
    cidr: '98.136.0.0/14',
    place: 'sunnyvale',
    industry: 'Media',
    audience: 'consumer',
    services: [
      https(['www.yahoo.com', 'finance.yahoo.com', 's.yimg.com'], 'web', 'browser', 2),
      service('IMAPS', 'TCP', 993, ['imap.mail.yahoo.com'], 'mail', 'mailer', 1, { tls13: 0.7 }),
    ],
  },
  {
    name: 'Edgecast Inc.',
    asn: 15133,
    cidr: '152.195.0.0/16',
    place: 'losAngeles',
    industry: 'Content Delivery',
    audience: 'both',
    services: [https(['cs9.wac.phicdn.net', 'ocsp.digicert.com', 'crl3.digicert.com'], 'api', 'browser', 1)],
  },
  {
    name: 'Valve Corporation',
    asn: 32590,
    cidr: '208.64.200.0/22',
    place: 'seattle',
    industry: 'Gaming',
    audience: 'consumer',
    services: [https(['store.steampowered.com', 'steamcdn-a.akamaihd.net', 'api.steampowered.com'], 'download', 'steam', 1)],
  },
  {
    name: 'ServiceNow, Inc.',
    asn: 16839,
    cidr: '149.96.0.0/16',
    place: 'sanJose',
    industry: 'Software',
    audience: 'work',
    services: [https(['examplecorp.service-now.com'], 'web', 'browser', 1)],
  },
  {
    name: 'Quad9',
    asn: 19281,
    cidr: '9.9.9.0/24',
    place: 'zurich',
    industry: 'Nonprofit',
    audience: 'infra',
    services: [
      service('DNS', 'UDP', 53, ['dns9.quad9.net'], 'dns', 'dnsClient', 1, { anycast: { ips: ['9.9.9.9', '149.112.112.112'], network: '9.9.9.0/24' } }),
    ],
  },
  {
    name: 'Hurricane Electric LLC',
    asn: 6939,
    cidr: '216.218.128.0/17',
    place: 'sanJose',
    industry: 'Telecommunications',
    audience: 'both',
    services: [https(['tunnelbroker.net', 'bgp.he.net', 'lg.he.net'], 'web', 'browser', 1)],
  },
  {
    name: 'Alibaba (US) Technology Co., Ltd.',
    asn: 45102,
    cidr: '47.88.0.0/14',
    place: 'singapore',
    industry: 'Cloud',
    audience: 'consumer',
    services: [https(['www.aliexpress.com', 'ae01.alicdn.com', 'g.alicdn.com'], 'web', 'browser', 1)],
  },
  {
    name: 'Tencent Building, Kejizhongyi Avenue',
    asn: 132203,
    cidr: '43.128.0.0/14',
    place: 'shenzhen',
    industry: 'Technology',
    audience: 'consumer',
    services: [https(['web.wechat.com', 'res.wx.qq.com'], 'websocket', 'browser', 1)],
  },
  {
    name: 'Deutsche Telekom AG',
    asn: 3320,
    cidr: '80.156.0.0/16',
    place: 'bonn',
    industry: 'Telecommunications',
    audience: 'both',
    services: [https(['www.telekom.de', 'www.t-online.de'], 'web', 'browser', 1)],
  },
  {
    name: 'Yandex LLC',
    asn: 13238,
    cidr: '77.88.0.0/18',
    place: 'moscow',
    industry: 'Technology',
    audience: 'consumer',
    services: [https(['yandex.ru', 'mc.yandex.ru', 'yastatic.net'], 'web', 'browser', 1)],
  },
  {
    name: 'Beijing Baidu Netcom Science and Technology Co., Ltd.',
    asn: 55967,
    cidr: '180.76.0.0/16',
    place: 'beijing',
    industry: 'Technology',
    audience: 'consumer',
    services: [https(['www.baidu.com', 'hm.baidu.com'], 'web', 'browser', 1)],
  },
  {
    name: 'Cogent Communications',
    asn: 174,
    cidr: '38.104.0.0/14',
    place: 'ashburn',
    industry: 'Telecommunications',
    audience: 'both',
    services: [https(['speedtest.example-isp.net', 'ix-status.example.net'], 'web', 'browser', 1)],
  },
];

/** Public resolvers the internal resolvers forward to (cache misses only). */
export const UPSTREAM_RESOLVERS: readonly { org: string; ips: readonly string[]; network: string; weight: number }[] = [
  { org: 'Google LLC', ips: ['8.8.8.8', '8.8.4.4'], network: '8.8.8.0/24', weight: 5 },
  { org: 'Cloudflare, Inc.', ips: ['1.1.1.1', '1.0.0.1'], network: '1.1.1.0/24', weight: 4 },
  { org: 'Quad9', ips: ['9.9.9.9', '149.112.112.112'], network: '9.9.9.0/24', weight: 1 },
];

/**
 * Hosting networks the benign mix never reaches. Scenarios pick their
 * destinations (and the brute-force source) here, so "rare org" is true by
 * construction.
 */
export const RARE_ORGS = {
  beacon: [
    { name: 'Stark Industries Solutions Ltd', asn: 44477, cidr: '45.148.10.0/24', place: 'amsterdam', industry: 'Hosting' },
    { name: 'M247 Europe SRL', asn: 9009, cidr: '89.38.96.0/19', place: 'bucharest', industry: 'Hosting' },
  ],
  exfil: [
    { name: 'Contabo GmbH', asn: 51167, cidr: '161.97.64.0/18', place: 'nuremberg', industry: 'Hosting' },
    { name: 'Vultr Holdings LLC', asn: 20473, cidr: '45.32.0.0/16', place: 'dallas', industry: 'Hosting' },
  ],
  dnsTunnel: [
    { name: 'FranTech Solutions', asn: 53667, cidr: '209.141.32.0/19', place: 'lasVegas', industry: 'Hosting' },
    { name: 'Shinjiru Technology Sdn Bhd', asn: 45839, cidr: '101.99.64.0/18', place: 'kualaLumpur', industry: 'Hosting' },
  ],
  bruteforce: [
    { name: 'Chinanet', asn: 4134, cidr: '218.92.0.0/16', place: 'nanjing', industry: 'Telecommunications' },
    { name: 'Stark Industries Solutions Ltd', asn: 44477, cidr: '45.148.10.0/24', place: 'amsterdam', industry: 'Hosting' },
  ],
} as const satisfies Record<string, readonly RareOrg[]>;

export interface RareOrg {
  name: string;
  asn: number;
  cidr: string;
  place: PlaceName;
  industry: string;
}

/** Residential and mobile networks the DMZ's visitors come from (inbound only). */
export const CLIENT_ISPS: readonly (RareOrg & { weight: number })[] = [
  { name: 'Comcast Cable Communications, LLC', asn: 7922, cidr: '73.0.0.0/8', place: 'philadelphia', industry: 'Telecommunications', weight: 5 },
  { name: 'AT&T Services, Inc.', asn: 7018, cidr: '99.0.0.0/10', place: 'dallas', industry: 'Telecommunications', weight: 4 },
  { name: 'Verizon Business', asn: 701, cidr: '71.160.0.0/11', place: 'newYork', industry: 'Telecommunications', weight: 3 },
  { name: 'Charter Communications Inc', asn: 20115, cidr: '24.24.0.0/14', place: 'chicago', industry: 'Telecommunications', weight: 3 },
  { name: 'T-Mobile USA, Inc.', asn: 21928, cidr: '172.56.0.0/14', place: 'seattle', industry: 'Telecommunications', weight: 3 },
  { name: 'Deutsche Telekom AG', asn: 3320, cidr: '79.192.0.0/10', place: 'frankfurt', industry: 'Telecommunications', weight: 1 },
  { name: 'British Telecommunications PLC', asn: 2856, cidr: '86.128.0.0/10', place: 'london', industry: 'Telecommunications', weight: 1 },
];
