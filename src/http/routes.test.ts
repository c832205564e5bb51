import { describe, expect, it } from 'vitest';
import { type HttpRoute, READ_METHODS, routeTable } from './routes.js';

const serve = () => undefined;
const upgrade = () => undefined;

describe('routeTable', () => {
  const graphql: HttpRoute = { paths: ['/graphql'], serve, upgrade };
  const rest: HttpRoute = { paths: ['/rest/*', '/search/*'], serve };
  const health: HttpRoute = { paths: ['/health'], methods: READ_METHODS, serve };
  const control: HttpRoute = { paths: ['/collector/control/1.0'], upgrade };
  const table = routeTable([graphql, rest, health, control]);

  it('takes exact paths and whole prefixes, nothing beside them', () => {
    expect(table.request('/graphql', 'POST')).toBe(graphql);
    expect(table.request('/graphql/', 'POST')).toBeUndefined();
    expect(table.request('/rest/nodes/1.0', 'GET')).toBe(rest);
    expect(table.request('/search/records/1.0', 'POST')).toBe(rest);
    expect(table.request('/rest', 'GET')).toBeUndefined();
    expect(table.request('/restless', 'GET')).toBeUndefined();
  });

  it('lets other methods pass a row that names its own', () => {
    expect(table.request('/health', 'GET')).toBe(health);
    expect(table.request('/health', 'HEAD')).toBe(health);
    expect(table.request('/health', 'POST')).toBeUndefined();
    expect(table.request('/health', undefined)).toBeUndefined();
  });

  it('answers requests and upgrades only where a row takes them', () => {
    expect(table.request('/collector/control/1.0', 'GET')).toBeUndefined();
    expect(table.upgrade('/collector/control/1.0')).toBe(control);
    expect(table.upgrade('/graphql')).toBe(graphql);
    expect(table.upgrade('/rest/nodes/1.0')).toBeUndefined();
    expect(table.upgrade('/nowhere')).toBeUndefined();
  });

  it('refuses two rows for one path', () => {
    expect(() => routeTable([graphql, { paths: ['/graphql'], serve }])).toThrow('Two routes for /graphql');
    expect(() => routeTable([rest, { paths: ['/rest/*'], serve }])).toThrow('Two routes for /rest/*');
  });
});
