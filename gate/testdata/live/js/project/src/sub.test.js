import { expect, test } from "vitest";
import { sub } from "./calc.js";

test("subtracts", () => {
  expect(sub(7, 2)).toBe(5);
});
