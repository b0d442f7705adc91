import { describe, expect, it } from "vitest";
import { adaptRecipe, repoShape } from "./init.js";

describe("init fits its files to the repo's revsync.yaml", () => {
  it("reads the environments, folders and the variables CI must set (not $${…} literals, nor the environment's own vars)", () => {
    const shape = repoShape(
      [
        "version: 1",
        "policies: rules",
        "tests: cases",
        "environments:",
        "  sandbox: { base_url: '${SBX_URL}', realm: '$${NOT_A_VAR}', vars: { contra: '${CONTRA_SBX}', floor: 80 } }",
        "  production: { base_url: https://api.example.com, auth_url: '${AUTH}/x', realm: acme }",
      ].join("\n"),
    );
    expect(shape).toEqual({ environments: ["sandbox", "production"], policies: "rules", tests: "cases", variables: ["AUTH", "CONTRA_SBX", "SBX_URL"] });
    expect(repoShape("version: 1\n")).toBeUndefined();
    expect(repoShape("environments: [\n")).toBeUndefined();
  });

  it("adapts a recipe: the matrix, the variables passed from CI, the folders that trigger it", () => {
    const recipe = [
      'on: { pull_request: { paths: ["revsync.yaml", "policies/**", "tests/**"] } }',
      "    matrix:",
      "      environment: [sandbox, production]",
      "    env:",
      "      ENVIRONMENT: x",
      "      SANDBOX_BASE_URL: ${{ vars.SANDBOX_BASE_URL }}",
      "      SANDBOX_AUTH_URL: ${{ vars.SANDBOX_AUTH_URL }}",
      "      PRODUCTION_BASE_URL: ${{ vars.PRODUCTION_BASE_URL }}",
      "      PRODUCTION_AUTH_URL: ${{ vars.PRODUCTION_AUTH_URL }}",
      "      REVSYNC_CLIENT_ID: ${{ secrets.REVSYNC_CLIENT_ID }}",
      "",
    ].join("\n");
    const out = adaptRecipe(recipe, { environments: ["qa"], policies: "rules", tests: "cases", variables: ["QA_URL", "QA_REALM"] });
    expect(out).toBe(
      [
        'on: { pull_request: { paths: ["revsync.yaml", "rules/**", "cases/**"] } }',
        "    matrix:",
        "      environment: [qa]",
        "    env:",
        "      ENVIRONMENT: x",
        "      QA_URL: ${{ vars.QA_URL }}",
        "      QA_REALM: ${{ vars.QA_REALM }}",
        "      REVSYNC_CLIENT_ID: ${{ secrets.REVSYNC_CLIENT_ID }}",
        "",
      ].join("\n"),
    );
  });
});
