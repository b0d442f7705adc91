import { request } from "node:http";
import { describe, expect, it } from "vitest";
import { listenForAnswer, type Verdict } from "./callback-listener.js";

/** A request as any client may send it, its Host and Origin chosen (fetch would set its own). */
function send(
  url: string,
  opts: { method?: string; host?: string; origin?: string; body?: string } = {},
): Promise<{ status: number; text: string; headers: Record<string, unknown> }> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: u.hostname,
        port: u.port,
        path: u.pathname,
        method: opts.method ?? "GET",
        headers: { host: opts.host ?? u.host, ...(opts.origin ? { origin: opts.origin } : {}) },
      },
      (res) => {
        let text = "";
        res.on("data", (c: Buffer) => (text += c.toString()));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, text, headers: res.headers }));
      },
    );
    req.on("error", reject);
    req.end(opts.body ?? "");
  });
}

describe("the loopback listener of the implicit flow's redirect", () => {
  it("listens on 127.0.0.1, serves its page with a policy that runs its own script alone, takes one answer from its own origin, and closes", async () => {
    const answers: string[] = [];
    const judge = async (fragment: string): Promise<Verdict> => {
      answers.push(fragment);
      return { accepted: true, message: "Signed in." };
    };
    const listener = await listenForAnswer(judge);
    const url = listener.redirectUri;
    const origin = new URL(url).origin;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/);
    try {
      const page = await send(url);
      expect(page.status).toBe(200);
      expect(page.text).toContain("location.hash.slice(1)");
      expect(page.text).toContain("history.replaceState");
      expect(page.headers["content-security-policy"]).toMatch(/^default-src 'none'; script-src 'sha256-[\w+/=]+'; connect-src 'self';/);
      expect(page.headers["cache-control"]).toBe("no-store");
      expect(page.headers["referrer-policy"]).toBe("no-referrer");

      // Another path, another host name for this address (DNS rebinding), another site's page: refused, unread.
      expect((await send(`${origin}/favicon.ico`)).status).toBe(404);
      expect((await send(url, { host: "attacker.example:80" })).status).toBe(400);
      expect((await send(url, { method: "POST", origin: "https://attacker.example", body: "state=x" })).status).toBe(403);
      expect((await send(url, { method: "POST", body: "state=x" })).status).toBe(403);
      expect(answers).toEqual([]);

      const taken = await send(url, { method: "POST", origin, body: "state=s&access_token=t" });
      expect(taken).toMatchObject({ status: 200, text: "Signed in." });
      expect(await listener.verdict).toEqual({ accepted: true, message: "Signed in." });
      expect(answers).toEqual(["state=s&access_token=t"]);
    } finally {
      await listener.close();
    }
    await expect(send(url)).rejects.toThrow(/ECONNREFUSED/);
  });

  it("answers a refused answer with the reason, takes no second answer, and fails the wait when judging fails", async () => {
    const refused = await listenForAnswer(async () => ({ accepted: false, message: "Not signed in: wrong state." }));
    const origin = new URL(refused.redirectUri).origin;
    try {
      expect(await send(refused.redirectUri, { method: "POST", origin, body: "state=x" })).toMatchObject({ status: 400, text: "Not signed in: wrong state." });
      expect((await send(refused.redirectUri, { method: "POST", origin, body: "state=y" })).status).toBe(409);
      expect((await refused.verdict).accepted).toBe(false);
    } finally {
      await refused.close();
    }
    const broken = await listenForAnswer(async () => {
      throw new Error("disk full");
    });
    try {
      const r = await send(broken.redirectUri, { method: "POST", origin: new URL(broken.redirectUri).origin, body: "state=x" });
      expect(r.status).toBe(500);
      await expect(broken.verdict).rejects.toThrow("disk full");
    } finally {
      await broken.close();
    }
  });
});
