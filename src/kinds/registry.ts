/** The registry: the resource kinds revsync knows, in apply order (every step of a kind waits for the
 *  steps of the kinds before it). Adding a kind is a module behind the Kind interface (./kind.ts) and a
 *  line here; docs/architecture.md walks through it. */
import { owns, type Kind, type Registry } from "./kind.js";
import { sspPolicy } from "./ssp/kind.js";
import { tenantConfiguration } from "./tenant-configuration/kind.js";

export const KINDS: Registry = [tenantConfiguration, sspPolicy];

/** The kind an address belongs to. */
export const kindOf = (kinds: Registry, address: string): Kind | undefined => kinds.find((k) => owns(k, address));

/** The kind whose policy files carry `kind: fileKind`. */
export const kindOfFile = (kinds: Registry, fileKind: string): Kind | undefined => kinds.find((k) => k.fileKind === fileKind);
