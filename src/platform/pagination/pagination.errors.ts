import { defineProblem } from '../problem/problem';

export const PaginationErrors = {
  invalidCursor: defineProblem({
    code: 'invalid-cursor',
    status: 400,
    title: 'Invalid cursor',
    description:
      'The `cursor` query parameter is not one this endpoint issued for these filters: it was altered or ' +
      'truncated, comes from another endpoint, merchant account or filter set, or is not base64url. Pass ' +
      '`next_cursor` / `previous_cursor` back unchanged, with the same filters.',
  }),
};
