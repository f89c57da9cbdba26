import { describe, expect, test } from "vitest";
import { add, mul } from "./calc.js";

describe("calc", () => {
  test("adds", () => {
    expect(add(2, 3)).toBe(5);
  });

  test("multiplies", () => {
    expect(mul(4, 5)).toBe(20);
  });
});
