// The method table behind 405 + Allow: parameters, wildcard tails, HEAD beside GET, one
// trailing slash, and paths no route matches.
import { expect, test } from "bun:test";
import { methodTable } from "../../../src/http/routing.ts";

const lookup = methodTable([
  { method: "POST", path: "/v1/orgs" },
  { method: "GET", path: "/v1/orgs/:org/members" },
  { method: "DELETE", path: "/v1/orgs/:org/members/:user" },
  { method: "PUT", path: "/v1/orgs/:org/members/:user" },
  { method: "PUT", path: "/v1/orgs/:org/repos/:repo/refs/*" },
  { method: "DELETE", path: "/v1/orgs/:org/repos/:repo/refs/*" },
  { method: "GET", path: "/v1/orgs/:org/repos/:repo/refs" },
  { method: "POST", path: "/v1/users/:handle/emails/verify" },
  { method: "DELETE", path: "/v1/users/:handle/emails/:email" },
  { method: "GET", path: "/v1/a.b" },
]);

test("methods in a fixed order, HEAD wherever GET is", () => {
  expect(lookup("/v1/orgs")).toEqual(["POST"]);
  expect(lookup("/v1/orgs/acme/members")).toEqual(["GET", "HEAD"]);
  expect(lookup("/v1/orgs/acme/members/ada")).toEqual(["PUT", "DELETE"]);
});

test("a wildcard tail takes slashes; the path without it is another route", () => {
  expect(lookup("/v1/orgs/acme/repos/app/refs/heads/main")).toEqual(["PUT", "DELETE"]);
  expect(lookup("/v1/orgs/acme/repos/app/refs")).toEqual(["GET", "HEAD"]);
});

test("a path two routes fit answers the methods of both", () => {
  expect(lookup("/v1/users/ada/emails/verify")).toEqual(["POST", "DELETE"]);
  expect(lookup("/v1/users/ada/emails/ada@example.com")).toEqual(["DELETE"]);
});

test("one trailing slash is ignored; static parts match literally", () => {
  expect(lookup("/v1/orgs/")).toEqual(["POST"]);
  expect(lookup("/v1/aXb")).toEqual([]);
  expect(lookup("/v1/a.b")).toEqual(["GET", "HEAD"]);
});

test("no route: an empty list", () => {
  for (const path of ["/v1/nope", "/v1/orgs/acme", "/v1/orgs/acme/members/ada/extra", "/", "/v1//members"]) expect(lookup(path)).toEqual([]);
});
