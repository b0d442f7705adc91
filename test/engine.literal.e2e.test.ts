import { describe } from "vitest";
import { engineSuite } from "./engine-suite.js";

describe("profile literal", () => engineSuite("literal"));
