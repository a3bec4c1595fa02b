/** What a config made from a definition takes from it. */
export interface ConfigDefinition {
  id: string;
  display_name: string;
  hosts: string[];
}

/**
 * The definitions a config can be made from (Gr4vy's `definition_id`). Definitions sit above configs
 * (test/unit/layering.spec.ts), so this folder names only the port; VaultForwardDefinitionsCoreModule
 * provides it, and the composition root (api.module.ts) hands that module to VaultForwardConfigsModule.wiredWith.
 */
export abstract class ConfigDefinitions {
  /** The merchant's definition `id` a config may be made from, or null when there is none. */
  abstract find(merchantAccountId: string, id: string): Promise<ConfigDefinition | null>;
}
