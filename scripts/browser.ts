/** Headless Chromium for the report's screenshot and tests: Debian's `chromium`, driven by playwright-core (which downloads nothing). */
import { chromium, type Browser } from 'playwright-core';

export const CHROMIUM_PATH = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: ['--no-sandbox', '--disable-gpu'] });
}
