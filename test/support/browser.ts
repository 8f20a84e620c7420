/** Debian's Chromium, headless, driven by playwright-core (no browser download here). */
import { chromium, type Browser } from 'playwright-core';
import { CHROMIUM } from './prerequisites.ts';

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    // No background networking: this machine has no network beyond loopback.
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
}
