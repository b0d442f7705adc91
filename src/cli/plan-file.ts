// Reading a saved plan is the plan layer's (src/plan/saved.ts); show and summary read it through here.
export { planFromJson, readPlanFile } from "../plan/saved.js";
