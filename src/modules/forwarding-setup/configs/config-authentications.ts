/**
 * What a config answer embeds as `authentications[]` (Gr4vy's PCIForwardConfig): the config's methods,
 * each as its own routes answer it. Authentication methods sit above configs (test/unit/layering.spec.ts),
 * so this folder names only the port; ForwardAuthenticationsModule provides it, and the composition root
 * (api.module.ts) hands that module to VaultForwardConfigsModule.withAuthentications.
 */
export abstract class ConfigAuthentications {
  /** Per config id, its methods newest first, at most MAX_EMBEDDED_AUTHENTICATIONS of them. */
  abstract embedded(merchantAccountId: string, configIds: readonly string[]): Promise<Map<string, object[]>>;
}

/** Bounds a config answer (and a page of 100 configs); GET …/authentications pages through every method. */
export const MAX_EMBEDDED_AUTHENTICATIONS = 20;
