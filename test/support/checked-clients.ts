import { Gr4vy } from '@gr4vy/sdk';
import type { SDKOptions } from '@gr4vy/sdk/lib/config';
import { HTTPClient } from '@gr4vy/sdk/lib/http';
import { contractOf, ContractViolation } from './contract';

/**
 * The contract checks of `http()` (test/support/http.ts: the document's own check and the strict one,
 * test/support/contract.ts) for answers that come another way: the official SDK's calls and a test's own
 * `fetch` (streams, aborts, a caller that leaves). Only answers of the service at `baseUrl` are held
 * against its document; a downstream test server's are not.
 */

/**
 * Every violation a checked SDK client met. The SDK turns an exception of a response hook into an
 * UnexpectedClientError, which a test expecting some rejection could take for the one it expects:
 * `expectNoSdkViolations` (an afterEach of each file using the SDK) fails the test all the same.
 */
const sdkViolations: ContractViolation[] = [];

export function expectNoSdkViolations(): void {
  const met = sdkViolations.splice(0);
  if (met.length > 0) throw met[0];
}

/** An HTTPClient for the SDK whose response hook checks every answer of the service at `baseUrl`. */
export function contractHttpClient(baseUrl: string): HTTPClient {
  const origin = new URL(baseUrl).origin;
  const client = new HTTPClient();
  client.addHook('response', async (response, request) => {
    const url = new URL(request.url);
    if (url.origin !== origin) return;
    const contract = await contractOf(baseUrl).catch(() => null);
    try {
      await contract?.checkResponse(request.method, url.pathname + url.search, response);
    } catch (error) {
      if (error instanceof ContractViolation) sdkViolations.push(error);
      throw error;
    }
  });
  return client;
}

/** The official SDK pointed at the service at `baseUrl`, every answer held against the document. */
export function checkedGr4vy(baseUrl: string, options: Omit<SDKOptions, 'serverURL' | 'httpClient'>): Gr4vy {
  return new Gr4vy({ ...options, serverURL: baseUrl, httpClient: contractHttpClient(baseUrl) });
}

/**
 * `fetch(baseUrl + path, init)` for a test that needs the Response itself (to stream, abort or time
 * it), with the answer held against the document as `http()` holds its answers.
 */
export async function checkedFetch(baseUrl: string, path: string, init: RequestInit = {}): Promise<Response> {
  // Fetched before the request, as http() does: the server may be gone after it.
  const contract = await contractOf(baseUrl).catch(() => null);
  const response = await fetch(`${baseUrl}${path}`, { redirect: 'manual', ...init });
  await contract?.checkResponse(init.method ?? 'GET', path, response);
  return response;
}
