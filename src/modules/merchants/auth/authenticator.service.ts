import type { IncomingHttpHeaders } from 'node:http';
import { echoed } from '../../../platform/problem/echo';
import { Injectable } from '@nestjs/common';
import { CommonErrors } from '../../../platform/problem/common.errors';
import { ProblemException } from '../../../platform/problem/problem';
import { MerchantAccountsService } from '../accounts/merchant-accounts.service';
import { MERCHANT_ACCOUNT_ID_PATTERN } from '../accounts/merchant-account-id';
import { AuthErrors, unauthorized } from '../access/auth.errors';
import { Principal } from '../access/principal';
import { RouteAccess, scopeGranted } from '../access/scopes';
import { TokenVerifier } from './token-verifier.service';

export const MERCHANT_HEADER = 'x-merchant-account-id';
/** Accepted so clients of the public API this service mirrors work unchanged. */
export const MERCHANT_HEADER_ALIAS = 'x-gr4vy-merchant-account-id';
/** The merchant an instance key acts for when it names none, as in the public API. */
export const DEFAULT_MERCHANT_ACCOUNT_ID = 'default';

const BEARER = /^Bearer[ ]+([A-Za-z0-9_\-.=]+)[ ]*$/i;

/**
 * Who is calling and for which merchant account, from the request headers alone. The AuthGuard uses
 * it for every Nest route; the forward route, served outside Nest (forward-http-handler.ts), uses it
 * directly, so both apply the very same rules.
 */
@Injectable()
export class Authenticator {
  constructor(
    private readonly tokens: TokenVerifier,
    private readonly merchants: MerchantAccountsService,
  ) {}

  async authenticate(
    headers: IncomingHttpHeaders,
    access: Exclude<RouteAccess, { kind: 'public' }> | undefined,
  ): Promise<Principal> {
    const header = headers.authorization;
    if (!header) throw unauthorized('The Authorization header is missing; send "Bearer <token>".');
    const match = BEARER.exec(header);
    if (!match) throw unauthorized('The Authorization header must be "Bearer <token>".');
    const token = await this.tokens.verify(match[1]);

    if (!access) {
      throw new ProblemException(AuthErrors.forbidden, 'This route declares no scope and is closed to every token.');
    }
    if (!scopeGranted(access.scope, token.scopes)) {
      throw new ProblemException(AuthErrors.forbidden, `This route requires the scope "${access.scope}".`);
    }

    const principal: Principal = {
      keyId: token.keyId,
      keyMerchantAccountId: token.keyMerchantAccountId,
      scopes: token.scopes,
      merchantAccountId: null,
    };
    switch (access.kind) {
      case 'instance':
        if (token.keyMerchantAccountId !== null) {
          throw new ProblemException(AuthErrors.instanceKeyRequired, 'This route is open to instance API keys only.');
        }
        return principal;
      case 'merchant':
        principal.merchantAccountId = await this.merchantFor(headers, token.keyMerchantAccountId);
        return principal;
      case 'owner':
        // A merchant key still may not name another merchant; an instance key acts on the whole instance.
        if (token.keyMerchantAccountId !== null)
          principal.merchantAccountId = await this.merchantFor(headers, token.keyMerchantAccountId);
        return principal;
      default:
        // An access kind this switch does not know is refused, so a new kind cannot open routes by accident.
        throw new ProblemException(
          AuthErrors.forbidden,
          'This route declares an access rule this service does not know.',
        );
    }
  }

  private async merchantFor(headers: IncomingHttpHeaders, keyMerchant: string | null): Promise<string> {
    const [name, requested] = requestedMerchant(headers);
    if (keyMerchant !== null) {
      if (requested !== undefined && requested !== keyMerchant) {
        throw new ProblemException(
          AuthErrors.merchantAccountMismatch,
          `This API key belongs to another merchant account than the one "${name}" names.`,
          [{ location: 'header', name, message: 'must be absent or the key’s own merchant account id' }],
        );
      }
      return keyMerchant;
    }
    const id = requested ?? DEFAULT_MERCHANT_ACCOUNT_ID;
    if (!MERCHANT_ACCOUNT_ID_PATTERN.test(id)) {
      throw new ProblemException(CommonErrors.validationFailed, `"${name}" is not a merchant account id.`, [
        { location: 'header', name, message: `must match ${MERCHANT_ACCOUNT_ID_PATTERN.source}` },
      ]);
    }
    if (!(await this.merchants.exists(id))) {
      throw new ProblemException(
        AuthErrors.merchantAccountUnknown,
        `Merchant account "${echoed(id)}" does not exist.`,
        [
          {
            location: 'header',
            name,
            message: requested === undefined ? 'absent, so "default" was used' : 'unknown merchant account',
          },
        ],
      );
    }
    return id;
  }
}

function requestedMerchant(headers: IncomingHttpHeaders): [string, string | undefined] {
  const primary = single(headers[MERCHANT_HEADER]);
  const alias = single(headers[MERCHANT_HEADER_ALIAS]);
  if (primary !== undefined && alias !== undefined && primary !== alias) {
    throw new ProblemException(
      CommonErrors.validationFailed,
      `"${MERCHANT_HEADER}" and "${MERCHANT_HEADER_ALIAS}" disagree.`,
      [
        {
          location: 'header',
          name: MERCHANT_HEADER_ALIAS,
          message: `must equal ${MERCHANT_HEADER} when both are sent`,
        },
      ],
    );
  }
  if (primary !== undefined) return [MERCHANT_HEADER, primary];
  if (alias !== undefined) return [MERCHANT_HEADER_ALIAS, alias];
  return [MERCHANT_HEADER, undefined];
}

function single(value: string | string[] | undefined): string | undefined {
  if (Array.isArray(value)) return value[0];
  return value === undefined || value === '' ? undefined : value;
}
