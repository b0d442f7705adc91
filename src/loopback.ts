/** The hosts that name this machine: the only ones plain http:// may reach (README, Security). */
export const LOOPBACK = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/i;

/** A plain http:// URL of this machine (the emulator's): nothing but this machine reaches the service
 *  behind it, as a real tenant is always https (and TLS is always verified, so no tunnel to one passes
 *  as loopback). */
export function isLoopbackHttp(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === "http:" && LOOPBACK.test(url.hostname);
  } catch {
    return false;
  }
}
