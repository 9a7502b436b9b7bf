/**
 * IP pool creation, update and deletion, as clients use them: PowerNSX's New-NsxIpPool takes the
 * new pool's id from the answer's body, nsxansible (through nsxramlclient) from its Location
 * header, so a create answers 201 with both (the body as text/plain: nsxramlclient parses every
 * `application/xml` answer as XML). An update is the GET document sent back (nsxansible raises
 * its revision first); the manager raises the revision itself. A deletion of a pool that has
 * allocations is refused unless `force=true` (PowerNSX's Remove-NsxIpPool -force), which drops
 * them with the pool. A pool's name is unique in its scope, as other grouping objects' are.
 */
import { codedBadRequest, notFound, readXmlBody, type ApiRequest, type ApiResponse } from "./api.ts";
import { ERROR_CODES } from "./error-codes.ts";
import { SimulatorInputError } from "./input.ts";
import { documentPath, readPoolDocument } from "./pool-document.ts";
import type { SimulatorState } from "./state.ts";

export type PoolChangeRoute = "createPool" | "updatePool" | "deletePool";

/** `id` is the scope for createPool, the pool otherwise */
export function handlePoolChange(
  state: SimulatorState,
  route: PoolChangeRoute,
  id: string,
  req: ApiRequest,
): ApiResponse {
  if (route === "deletePool") return deletePool(state, id, req.query.get("force") === "true");
  const body = readXmlBody(req);
  if ("refused" in body) return body.refused;
  const read = readPoolDocument(body.text);
  if (!read.ok) return codedBadRequest(ERROR_CODES.invalidRequest, read.message);
  try {
    return route === "createPool" ? createPool(state, id, read.input) : updatePool(state, id, read.input);
  } catch (error) {
    if (!(error instanceof SimulatorInputError)) throw error;
    const field = documentPath(error.path);
    return codedBadRequest(
      ERROR_CODES.invalidRequest,
      `ipamAddressPool: ${error.path === "" ? error.message : error.message.replace(error.path, field)}`,
    );
  }
}

function createPool(
  state: SimulatorState,
  scopeId: string,
  input: Parameters<SimulatorState["createPool"]>[1],
): ApiResponse {
  const result = state.createPool(scopeId, input);
  if (result.ok) {
    return {
      status: 201,
      headers: { Location: `/api/2.0/services/ipam/pools/${result.pool.id}` },
      body: result.pool.id,
      contentType: "text/plain",
    };
  }
  if (result.reason === "unknownScope") return notFound(scopeId);
  return nameTaken(input.name, result.scopeId);
}

function updatePool(
  state: SimulatorState,
  poolId: string,
  input: Parameters<SimulatorState["updatePool"]>[1],
): ApiResponse {
  const result = state.updatePool(poolId, input);
  if (result.ok) return { status: 204 };
  if (result.reason === "missing") return notFound(poolId);
  if (result.reason === "duplicateName") return nameTaken(input.name, result.scopeId);
  return codedBadRequest(
    ERROR_CODES.addressNotAllocated,
    `The IP pool ${poolId} has allocated addresses outside the new ranges: ${result.addresses.join(", ")}.`,
  );
}

function deletePool(state: SimulatorState, poolId: string, force: boolean): ApiResponse {
  const result = state.deletePool(poolId, force);
  if (result.ok) return { status: 204 };
  if (result.reason === "missing") return notFound(poolId);
  return codedBadRequest(
    ERROR_CODES.poolHasAllocations,
    `The IP pool ${poolId} has ${result.count ?? 0} allocated addresses; release them or delete with force=true.`,
  );
}

function nameTaken(name: string, scopeId: string): ApiResponse {
  return codedBadRequest(
    ERROR_CODES.invalidRequest,
    `Another object with same name : ${name} already exists in the current scope : ${scopeId}.`,
  );
}
