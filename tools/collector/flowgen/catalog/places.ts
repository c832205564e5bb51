// Where external organizations (and the monitored site) are, for GeoEntry and
// for round-trip times, which grow with distance from the site.

export interface Place {
  country_iso_code: string;
  country_name: string;
  city_name: string;
  continent_name: string;
  time_zone: string;
  lat: number;
  lon: number;
}

function place(country_iso_code: string, country_name: string, city_name: string, continent_name: string, time_zone: string, lat: number, lon: number): Place {
  return { country_iso_code, country_name, city_name, continent_name, time_zone, lat, lon };
}

const NA = 'North America';
const EU = 'Europe';
const AS = 'Asia';

export const PLACES = {
  mountainView: place('US', 'United States', 'Mountain View', NA, 'America/Los_Angeles', 37.386, -122.084),
  redmond: place('US', 'United States', 'Redmond', NA, 'America/Los_Angeles', 47.674, -122.121),
  seattle: place('US', 'United States', 'Seattle', NA, 'America/Los_Angeles', 47.606, -122.332),
  ashburn: place('US', 'United States', 'Ashburn', NA, 'America/New_York', 39.044, -77.488),
  sanFrancisco: place('US', 'United States', 'San Francisco', NA, 'America/Los_Angeles', 37.775, -122.419),
  cupertino: place('US', 'United States', 'Cupertino', NA, 'America/Los_Angeles', 37.323, -122.032),
  menloPark: place('US', 'United States', 'Menlo Park', NA, 'America/Los_Angeles', 37.453, -122.182),
  sanJose: place('US', 'United States', 'San Jose', NA, 'America/Los_Angeles', 37.338, -121.886),
  sunnyvale: place('US', 'United States', 'Sunnyvale', NA, 'America/Los_Angeles', 37.369, -122.036),
  cambridge: place('US', 'United States', 'Cambridge', NA, 'America/New_York', 42.373, -71.11),
  newYork: place('US', 'United States', 'New York', NA, 'America/New_York', 40.713, -74.006),
  newark: place('US', 'United States', 'Newark', NA, 'America/New_York', 40.736, -74.172),
  chicago: place('US', 'United States', 'Chicago', NA, 'America/Chicago', 41.878, -87.63),
  dallas: place('US', 'United States', 'Dallas', NA, 'America/Chicago', 32.777, -96.797),
  denver: place('US', 'United States', 'Denver', NA, 'America/Denver', 39.739, -104.99),
  losAngeles: place('US', 'United States', 'Los Angeles', NA, 'America/Los_Angeles', 34.052, -118.244),
  lasVegas: place('US', 'United States', 'Las Vegas', NA, 'America/Los_Angeles', 36.17, -115.14),
  philadelphia: place('US', 'United States', 'Philadelphia', NA, 'America/New_York', 39.953, -75.165),
  london: place('GB', 'United Kingdom', 'London', EU, 'Europe/London', 51.507, -0.128),
  frankfurt: place('DE', 'Germany', 'Frankfurt am Main', EU, 'Europe/Berlin', 50.11, 8.682),
  falkenstein: place('DE', 'Germany', 'Falkenstein', EU, 'Europe/Berlin', 50.478, 12.371),
  nuremberg: place('DE', 'Germany', 'Nuremberg', EU, 'Europe/Berlin', 49.452, 11.077),
  bonn: place('DE', 'Germany', 'Bonn', EU, 'Europe/Berlin', 50.737, 7.098),
  roubaix: place('FR', 'France', 'Roubaix', EU, 'Europe/Paris', 50.691, 3.174),
  amsterdam: place('NL', 'Netherlands', 'Amsterdam', EU, 'Europe/Amsterdam', 52.368, 4.904),
  stockholm: place('SE', 'Sweden', 'Stockholm', EU, 'Europe/Stockholm', 59.329, 18.069),
  zurich: place('CH', 'Switzerland', 'Zurich', EU, 'Europe/Zurich', 47.377, 8.541),
  moscow: place('RU', 'Russia', 'Moscow', EU, 'Europe/Moscow', 55.756, 37.617),
  bucharest: place('RO', 'Romania', 'Bucharest', EU, 'Europe/Bucharest', 44.426, 26.102),
  shenzhen: place('CN', 'China', 'Shenzhen', AS, 'Asia/Shanghai', 22.543, 114.058),
  nanjing: place('CN', 'China', 'Nanjing', AS, 'Asia/Shanghai', 32.06, 118.797),
  beijing: place('CN', 'China', 'Beijing', AS, 'Asia/Shanghai', 39.904, 116.407),
  singapore: place('SG', 'Singapore', 'Singapore', AS, 'Asia/Singapore', 1.352, 103.82),
  kualaLumpur: place('MY', 'Malaysia', 'Kuala Lumpur', AS, 'Asia/Kuala_Lumpur', 3.139, 101.687),
} as const satisfies Record<string, Place>;

export type PlaceName = keyof typeof PLACES;

/**
 * Round-trip time between two places: fibre carries light at ~200,000 km/s,
 * real paths are ~1.6× the great circle, plus a few ms of access latency.
 */
export function baseRttSecs(a: Place, b: Place): number {
  const toRad = Math.PI / 180;
  const dLat = (b.lat - a.lat) * toRad;
  const dLon = (b.lon - a.lon) * toRad;
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(a.lat * toRad) * Math.cos(b.lat * toRad) * Math.sin(dLon / 2) ** 2;
  const km = 2 * 6371 * Math.asin(Math.min(1, Math.sqrt(h)));
  return 0.004 + (2 * km * 1.6) / 200_000;
}
