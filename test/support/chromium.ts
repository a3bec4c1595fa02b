import { Browser, chromium } from 'playwright-core';

/** Debian's Chromium (`.ci/run` installs it), or CHROMIUM_PATH. */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * Headless Chromium as the browser tests drive it. This machine's network is closed: without the
 * background-networking flags Chromium keeps trying Google's hosts; as root it needs --no-sandbox.
 */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}
