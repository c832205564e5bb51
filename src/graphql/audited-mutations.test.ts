import { type ExecutionResult, GraphQLError, parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { authorizationError } from '../errors.js';
import { mutationCalls } from './audited-mutations.js';

const ran = (query: string, variableValues: Record<string, unknown> = {}) => ({ document: parse(query), variableValues });
const failure = (error: GraphQLError, key: string) => new GraphQLError(error.message, { path: [key], originalError: error, extensions: error.extensions });

describe('the mutation fields an operation ran', () => {
  it('reads arguments from literals and variables, through fragments, once per response key', () => {
    const op = ran(
      `mutation($id: String!) { deleteProfile(profileId: $id) { __typename } ...More ... on Mutation { again: deleteProfile(profileId: "p2") { __typename } }
        deleteProfile(profileId: $id) { __typename } }
       fragment More on Mutation { activateNode(nodeId: "n1") { __typename } }`,
      { id: 'p1' },
    );
    const result: ExecutionResult = { data: { deleteProfile: {}, activateNode: {}, again: {} } };
    expect(mutationCalls(op, result)).toEqual([
      { field: 'deleteProfile', args: { profileId: 'p1' }, result: 'ok' },
      { field: 'activateNode', args: { nodeId: 'n1' }, result: 'ok' },
      { field: 'deleteProfile', args: { profileId: 'p2' }, result: 'ok' },
    ]);
  });

  it('names the code of a failed field, and leaves out the fields that never ran after it or were skipped', () => {
    const op = ran('mutation { a: deleteProfile(profileId: "1") { __typename } b: deleteProfile(profileId: "2") { __typename } }');
    expect(mutationCalls(op, { data: null, errors: [failure(authorizationError('no'), 'a')] })).toEqual([
      { field: 'deleteProfile', args: { profileId: '1' }, result: 'authorization_error' },
    ]);
    expect(mutationCalls(op, { data: null, errors: [failure(new Error('bug') as GraphQLError, 'b')] })).toEqual([
      { field: 'deleteProfile', args: { profileId: '2' }, result: 'internal_error' },
    ]);
    expect(mutationCalls(op, { data: { a: {} } }).map((c) => c.args)).toEqual([{ profileId: '1' }]);
    // Refused before any field ran (a variable of the wrong type): nothing.
    expect(mutationCalls(op, { errors: [new GraphQLError('Variable "$x" got invalid value')] })).toEqual([]);
  });

  it('ignores queries and subscriptions', () => {
    expect(mutationCalls(ran('{ viewer { __typename } }'), { data: { viewer: {} } })).toEqual([]);
    expect(mutationCalls(ran('subscription { events(customerId: "c") { __typename } }'), { data: {} })).toEqual([]);
  });
});
