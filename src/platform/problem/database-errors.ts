import { QueryFailedError } from 'typeorm';
import { CommonErrors } from './common.errors';
import { ProblemException } from './problem';

/** PostgreSQL's unique_violation, optionally of one named constraint or unique index. */
export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  if (!(error instanceof QueryFailedError)) return false;
  const driverError = error.driverError as { code?: string; constraint?: string };
  return driverError.code === '23505' && (constraint === undefined || driverError.constraint === constraint);
}

/** Socket-level failures on the way to PostgreSQL. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
]);
/** admin_shutdown, crash_shutdown, cannot_connect_now, too_many_connections. Class 08 is checked as a prefix. */
const UNAVAILABLE_SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300']);
/** pg and pg-pool report these without a code. */
const UNAVAILABLE_MESSAGES = [
  'Connection terminated',
  'timeout exceeded when trying to connect',
  'Query read timeout',
  'Client has encountered a connection error and is not queryable',
  'Connection is closed',
];

/**
 * Whether an error means "the database cannot be reached right now" (a 503 the caller may retry),
 * rather than a fault of the query or of our code. Looks through TypeORM's QueryFailedError
 * (driverError) and `cause` chains, a few levels deep.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  let current: unknown = error;
  // Duck-typed rather than instanceof Error: socket errors may come from another realm (a VM context).
  for (let depth = 0; depth < 4 && typeof current === 'object' && current !== null; depth++) {
    if (current instanceof DatabaseUnavailableError) return true;
    const { code, message } = current as { code?: unknown; message?: unknown };
    if (typeof code === 'string') {
      if (NETWORK_CODES.has(code) || UNAVAILABLE_SQLSTATES.has(code) || /^08[0-9A-Z]{3}$/.test(code)) return true;
    }
    if (typeof message === 'string' && UNAVAILABLE_MESSAGES.some((known) => message.startsWith(known))) return true;
    const next: unknown = (current as { driverError?: unknown }).driverError ?? (current as { cause?: unknown }).cause;
    if (next === current) break;
    current = next;
  }
  return false;
}

/** Raised by our own code when a bounded wait on the database ran out. */
export class DatabaseUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DatabaseUnavailableError';
  }
}

/** Seconds a caller is told to wait (Retry-After) when the database is unavailable. */
export const DATABASE_RETRY_AFTER_SECONDS = 2;

/** The 503 every route answers while the database is unavailable: the caller may retry after a moment. */
export function serviceUnavailableProblem(
  detail = 'The database is not reachable right now; retry shortly.',
): ProblemException {
  return new ProblemException(CommonErrors.serviceUnavailable, detail, undefined, {
    'retry-after': String(DATABASE_RETRY_AFTER_SECONDS),
  });
}
