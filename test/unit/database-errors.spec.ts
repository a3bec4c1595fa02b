import { QueryFailedError } from 'typeorm';
import { DatabaseUnavailableError, isDatabaseUnavailable } from '../../src/platform/problem/database-errors';
import { toProblem } from '../../src/platform/problem/problem.filter';

const withCode = (code: string, message = 'x') => Object.assign(new Error(message), { code });

describe('isDatabaseUnavailable', () => {
  it.each([
    ['connection refused', withCode('ECONNREFUSED')],
    ['connection reset', withCode('ECONNRESET')],
    ['connect timeout (pg-pool)', new Error('timeout exceeded when trying to connect')],
    ['connection terminated', new Error('Connection terminated unexpectedly')],
    ['query_timeout', new Error('Query read timeout')],
    ['SQLSTATE 08006 inside a QueryFailedError', new QueryFailedError('SELECT 1', [], withCode('08006'))],
    ['admin_shutdown 57P01', withCode('57P01')],
    ['cannot_connect_now 57P03', withCode('57P03')],
    ['too_many_connections 53300', withCode('53300')],
    ['in a cause chain', new Error('wrapped', { cause: withCode('ECONNREFUSED') })],
    ['our own bound', new DatabaseUnavailableError('no commit within 2000 ms')],
    ['an error object of another realm', { code: 'ECONNREFUSED', message: 'connect ECONNREFUSED 127.0.0.1:5432' }],
  ])('%s → unavailable', (_, error) => {
    expect(isDatabaseUnavailable(error)).toBe(true);
  });

  it.each([
    ['unique violation', new QueryFailedError('INSERT', [], withCode('23505'))],
    ['syntax error', new QueryFailedError('SELEC', [], withCode('42601'))],
    ['query canceled by statement_timeout', withCode('57014')],
    ['a plain bug', new TypeError('undefined is not a function')],
    ['not an error', 'ECONNREFUSED'],
    ['nothing', undefined],
  ])('%s → not unavailable', (_, error) => {
    expect(isDatabaseUnavailable(error)).toBe(false);
  });
});

describe('toProblem', () => {
  it("answers a caller's own aborted request 400, not 503: its ECONNRESET is the caller's socket", () => {
    const problem = toProblem(withCode('ECONNRESET', 'aborted'));
    expect(problem.definition.code).toBe('bad-request');
    expect(problem.definition.status).toBe(400);
  });

  it('still answers a reset connection to the database 503', () => {
    expect(toProblem(withCode('ECONNRESET', 'read ECONNRESET')).definition.code).toBe('service-unavailable');
  });
});
