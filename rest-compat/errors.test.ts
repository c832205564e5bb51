import { GraphQLError } from 'graphql';
import { describe, expect, it } from 'vitest';
import { DomainError } from '../src/errors.js';
import { errorOf } from './errors.js';

describe('errorOf', () => {
  it('answers a DomainError as itself, GraphQL’s own refusals of the input 400, and leaves a bug for the router', () => {
    const domain = new DomainError(404, 'not_found', 'No such node');
    expect(errorOf({ errors: [new GraphQLError(domain.message, { path: ['node'], originalError: domain })] })).toBe(domain);

    const coercion = errorOf({ errors: [new GraphQLError('Variable "$n" got invalid value "x"')] });
    expect(coercion).toMatchObject({ status: 400, code: 'invalid_request', message: 'Variable "$n" got invalid value "x"' });

    const plugin = new GraphQLError('Argument "first" must be a non-negative integer');
    const refused = errorOf({ errors: [new GraphQLError(plugin.message, { path: ['profiles'], originalError: plugin })] });
    expect(refused).toMatchObject({ status: 400, code: 'invalid_request' });

    const bug = new GraphQLError('x is undefined', { path: ['node'], originalError: new TypeError('x is undefined') });
    expect(errorOf({ errors: [bug] })).toBe(bug);
    expect(errorOf({ data: {} })).toBeUndefined();
  });
});
