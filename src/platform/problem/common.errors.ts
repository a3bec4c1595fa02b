import { defineProblem } from './problem';

/** Problems that belong to no feature: the HTTP layer's own. */
export const CommonErrors = {
  routeNotFound: defineProblem({
    code: 'route-not-found',
    status: 404,
    title: 'Route not found',
    description: 'No route matches this method and path. Check the path against /openapi.json.',
  }),
  resourceNotFound: defineProblem({
    code: 'resource-not-found',
    status: 404,
    title: 'Resource not found',
    description:
      'The resource does not exist in the merchant account the request acts for. Resources of other merchant ' +
      'accounts are reported the same way.',
  }),
  validationFailed: defineProblem({
    code: 'validation-failed',
    status: 400,
    title: 'Invalid request',
    description: 'One or more fields, query parameters or headers are missing or malformed; `errors` lists each one.',
  }),
  invalidJson: defineProblem({
    code: 'invalid-json',
    status: 400,
    title: 'Malformed JSON body',
    description: 'The body was sent as application/json but does not parse as JSON.',
  }),
  jsonTooDeep: defineProblem({
    code: 'json-too-deep',
    status: 400,
    title: 'JSON body nested too deeply',
    description:
      'The application/json body nests arrays and objects deeper than 64 levels. No request of this API needs ' +
      'more than a few; flatten the body.',
  }),
  uriTooLong: defineProblem({
    code: 'uri-too-long',
    status: 414,
    title: 'URI too long',
    description:
      'A path segment of the request is longer than any identifier of this API (100 characters). Check the path against /openapi.json.',
  }),
  headerFieldsTooLarge: defineProblem({
    code: 'header-fields-too-large',
    status: 431,
    title: 'Request header fields too large',
    description: 'The request line and headers together exceed 16 KiB. Shorten the URL (query string) or the headers.',
  }),
  requestTimeout: defineProblem({
    code: 'request-timeout',
    status: 408,
    title: 'Request timeout',
    description:
      'The request line and headers did not all arrive within the headers timeout (10 s by default), or the whole ' +
      'request within the request timeout (30 s). The connection is closed; send the request again, whole and promptly.',
  }),
  expectationFailed: defineProblem({
    code: 'expectation-failed',
    status: 417,
    title: 'Expectation failed',
    description:
      'The request has an Expect header other than 100-continue, the only expectation this service meets. Leave the header out.',
  }),
  badRequest: defineProblem({
    code: 'bad-request',
    status: 400,
    title: 'Bad request',
    description: 'The request could not be understood.',
  }),
  payloadTooLarge: defineProblem({
    code: 'payload-too-large',
    status: 413,
    title: 'Request body too large',
    description: 'The request body exceeds the size this route accepts (1 MiB).',
  }),
  unsupportedMediaType: defineProblem({
    code: 'unsupported-media-type',
    status: 415,
    title: 'Unsupported media type',
    description: 'The Content-Type of the request is not one this route accepts (usually application/json).',
  }),
  methodNotAllowed: defineProblem({
    code: 'method-not-allowed',
    status: 405,
    title: 'Method not allowed',
    description: 'The route exists but not with this HTTP method.',
  }),
  conflict: defineProblem({
    code: 'conflict',
    status: 409,
    title: 'Conflict',
    description: 'The request conflicts with the current state of a resource.',
  }),
  serviceUnavailable: defineProblem({
    code: 'service-unavailable',
    status: 503,
    title: 'Service unavailable',
    description: 'A dependency of the service (database or queue) is not available. Retry later.',
  }),
  internalError: defineProblem({
    code: 'internal-error',
    status: 500,
    title: 'Internal error',
    description:
      'The service failed unexpectedly. The request id in the response identifies the log line for the operator.',
  }),
};
