// TEMPORARY local copy of H7's interface (deleted when h7-auth-resource is merged).
export type AuthenticationKind = 'hmac-signature' | 'mutual-tls' | 'jwe-payload';
export interface UsableAuthenticationMethod {
  id: string;
  configId: string;
  kind: AuthenticationKind;
  version: string;
  fields: Readonly<Record<string, string>>;
}

/** TEMPORARY stand-in for H7's ForwardAuthenticationsService (deleted when h7-auth-resource is merged). */
export abstract class ForwardAuthenticationsService {
  abstract forForward(merchantAccountId: string, configId: string, ids: readonly string[]): Promise<UsableAuthenticationMethod[]>;
}
