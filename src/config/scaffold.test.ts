import { describe, expect, it } from "vitest";
import { adaptRecipe, editPin, pinFrom, repoShape } from "./scaffold.js";

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
    expect(shape).toEqual({
      environments: ["sandbox", "production"],
      credentials: ["REVSYNC_SANDBOX", "REVSYNC_PRODUCTION"],
      policies: "rules",
      tests: "cases",
      variables: ["AUTH", "CONTRA_SBX", "SBX_URL"],
    });
    expect(repoShape("environments:\n  eu-west: { base_url: u, credentials: { prefix: ACME_EU } }\n  us: { base_url: u }\n")?.credentials).toEqual([
      "ACME_EU",
      "REVSYNC_US",
    ]);
    expect(repoShape("version: 1\n")).toBeUndefined();
    expect(repoShape("environments: [\n")).toBeUndefined();
  });

  it("adapts a recipe: the matrix, the variables passed from CI, each environment's own credentials, the folders that trigger it", () => {
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
      "      REVSYNC_SANDBOX_CLIENT_ID: ${{ secrets.REVSYNC_SANDBOX_CLIENT_ID }}",
      "      REVSYNC_SANDBOX_PASSWORD: ${{ secrets.REVSYNC_SANDBOX_PASSWORD }}",
      "      REVSYNC_PRODUCTION_CLIENT_ID: ${{ secrets.REVSYNC_PRODUCTION_CLIENT_ID }}",
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
        "      REVSYNC_QA_CLIENT_ID: ${{ secrets.REVSYNC_QA_CLIENT_ID }}",
        "      REVSYNC_QA_CLIENT_SECRET: ${{ secrets.REVSYNC_QA_CLIENT_SECRET }}",
        "      REVSYNC_QA_USERNAME: ${{ secrets.REVSYNC_QA_USERNAME }}",
        "      REVSYNC_QA_PASSWORD: ${{ secrets.REVSYNC_QA_PASSWORD }}",
        "      REVSYNC_CLIENT_ID: ${{ secrets.REVSYNC_CLIENT_ID }}",
        "",
      ].join("\n"),
    );
  });

  it("pins revsync at its git origin, but never at a path on this machine, which CI cannot install from", () => {
    expect(pinFrom("git@github.com:acme/revsync.git", "v1")).toEqual({ spec: "git+ssh://git@github.com/acme/revsync.git#v1" });
    expect(pinFrom("https://example.com/acme/revsync.git", "abc")).toEqual({ spec: "git+https://example.com/acme/revsync.git#abc" });
    for (const local of ["/work/main", "file:///work/main", "git+file:///work/main", "../revsync", "C:\\src\\revsync"])
      expect(pinFrom(local, "v1"), local).toEqual({ local });
  });

  it("changes only the pin in a package.json, its formatting kept", () => {
    const edit = (text: string, section = "devDependencies") => {
      const pkg = JSON.parse(text);
      const wanted = { ...pkg, [section]: { ...pkg[section], revsync: "R" } };
      return editPin(text, section, "R", wanted);
    };
    const scripts = '{\n\t"name": "mine",\n\t"scripts": {"x": "echo"},\n';
    expect(edit(`${scripts}\t"devDependencies": { "x": "1" }\n}\n`)).toBe(`${scripts}\t"devDependencies": { "revsync": "R", "x": "1" }\n}\n`);
    expect(edit(`${scripts}\t"devDependencies": {\n\t\t"x": "1"\n\t}\n}\n`)).toBe(
      `${scripts}\t"devDependencies": {\n\t\t"revsync": "R",\n\t\t"x": "1"\n\t}\n}\n`,
    );
    expect(edit(`${scripts}\t"devDependencies": {\n\t}\n}\n`)).toBe(`${scripts}\t"devDependencies": {\n\t\t"revsync": "R"\n\t}\n}\n`);
    expect(edit(`${scripts}\t"devDependencies": { "revsync": "old" }\n}\n`)).toBe(`${scripts}\t"devDependencies": { "revsync": "R" }\n}\n`);
    // A script named revsync is not the pin.
    expect(edit('{ "scripts": { "revsync": "revsync plan" }, "dependencies": { "revsync": "old" } }', "dependencies")).toBe(
      '{ "scripts": { "revsync": "revsync plan" }, "dependencies": { "revsync": "R" } }',
    );
    expect(edit(`${scripts}\t"private": true\n}\n`)).toBe(`${scripts}\t"private": true,\n\t"devDependencies": {\n\t\t"revsync": "R"\n\t}\n}\n`);
    expect(edit('{"name":"x"}')).toBe('{"name":"x", "devDependencies": { "revsync": "R" }}');
  });
});
