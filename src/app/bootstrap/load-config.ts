import { AppConfig, ConfigError, loadConfig } from '../../platform/config/config';

/** A bad variable stops the process with one line naming it, before anything else starts. */
export function loadConfigOrExit(): AppConfig {
  try {
    return loadConfig(process.env);
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(`Configuration error: ${error.message}`);
      process.exit(1);
    }
    throw error;
  }
}
