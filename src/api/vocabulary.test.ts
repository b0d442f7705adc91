import { describe, expect, it } from "vitest";
import { unknownValues } from "./vocabulary.js";

describe("values of documented fields that the interface does not list", () => {
  it("each one, at its JSON pointer, under the nearest policy's name; documented values and other fields pass", () => {
    const body = {
      compliance_details: [
        { compliance_name: "A", compliance_spec: [{ method: "upload", operator: "between", when: [{ operator: "equality" }] }] },
        { compliance_name: "B", batches: [{ values: [{ value_type: "Ratio" }, 7, null] }], method: "formula" },
      ],
      method: "scrape",
    };
    expect(unknownValues(body)).toEqual([
      { field: "operator", value: "between", pointer: "/compliance_details/0/compliance_spec/0/operator", policy: "A" },
      { field: "value_type", value: "Ratio", pointer: "/compliance_details/1/batches/0/values/0/value_type", policy: "B" },
      { field: "method", value: "scrape", pointer: "/method", policy: undefined },
    ]);
  });

  it("a field named as a property every object has (constructor, toString, __proto__) is a field like any other", () => {
    const body = JSON.parse('{"constructor": "x", "toString": "y", "__proto__": "z", "hasOwnProperty": "w", "items": [{"valueOf": "v", "method": "poll"}]}');
    expect(unknownValues(body)).toEqual([{ field: "method", value: "poll", pointer: "/items/0/method", policy: undefined }]);
  });
});
