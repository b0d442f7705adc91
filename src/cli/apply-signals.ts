// Apply's signal handling is the apply session's (src/session/apply-signals.ts); the run's streams name its source.
export type { SignalSource } from "../session/apply-signals.js";
