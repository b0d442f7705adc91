import { describe, expect, it } from "vitest";
import { browserCommands, openBrowser } from "./open-browser.js";

const URL_ = "http://127.0.0.1:5/auth?a=1&b=2";

describe("opening the browser", () => {
  it("BROWSER's commands in order (its %s the URL, else the URL last; quotes keep words), else the platform's opener", () => {
    expect(browserCommands(URL_, { BROWSER: "firefox" }, "linux")).toEqual([["firefox", URL_]]);
    expect(browserCommands(URL_, { BROWSER: "'/opt/My Browser/run' --new-tab %s --x:w3m" }, "linux")).toEqual([
      ["/opt/My Browser/run", "--new-tab", URL_, "--x"],
      ["w3m", URL_],
    ]);
    expect(browserCommands(URL_, { BROWSER: " " }, "linux")).toEqual([["xdg-open", URL_]]);
    expect(browserCommands(URL_, {}, "darwin")).toEqual([["open", URL_]]);
    expect(browserCommands(URL_, {}, "win32")).toEqual([["rundll32", "url.dll,FileProtocolHandler", URL_]]);
    expect(browserCommands(URL_, {}, "freebsd")).toEqual([["xdg-open", URL_]]);
  });

  it("says whether a command started: none that exists is false (the URL is then printed)", async () => {
    expect(await openBrowser(URL_, { BROWSER: "/nonexistent/browser-a:/nonexistent/browser-b", PATH: process.env.PATH }, "linux")).toBe(false);
    expect(await openBrowser(URL_, { BROWSER: "/nonexistent/browser:true", PATH: process.env.PATH }, "linux")).toBe(true);
  });
});
