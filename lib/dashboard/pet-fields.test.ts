import { describe, expect, it } from "vitest";
import { changedPetFields, fieldLabel, joinMetadata, petLabel, petName, splitMetadata } from "./pet-fields";

const KEYS = ["name", "owner", "microchip"];

describe("pet metadata fields", () => {
  it("splits stored metadata into the account's fields and the other keys, and joins them back", () => {
    const stored = JSON.stringify({ name: "Rex", chip: "250", owner: "J. Smith", vaccinated: true });
    const { fields, rest } = splitMetadata(stored, KEYS);
    expect(fields).toEqual({ name: "Rex", owner: "J. Smith", microchip: "" });
    expect(JSON.parse(rest)).toEqual({ chip: "250", vaccinated: true });
    expect(JSON.parse(joinMetadata(fields, rest, KEYS))).toEqual({ name: "Rex", owner: "J. Smith", chip: "250", vaccinated: true });
  });

  it("leaves empty fields out, and keeps metadata that is not an object whole in the raw editor", () => {
    expect(joinMetadata({ name: " Rex ", owner: "", microchip: "" }, "", KEYS)).toBe('{"name":"Rex"}');
    expect(splitMetadata('"just text"', KEYS)).toEqual({ fields: { name: "", owner: "", microchip: "" }, rest: '"just text"' });
    expect(() => joinMetadata({}, "[1, 2]", KEYS)).toThrow(/JSON object/);
    expect(() => joinMetadata({}, "{", KEYS)).toThrow();
  });

  it("names a pet by its name key, else by species and breed", () => {
    expect(petName('{"name": "Rex"}')).toBe("Rex");
    expect(petName('{"name": "  "}')).toBeNull();
    expect(petName("not json")).toBeNull();
    expect(petLabel({ species: "CAT", breed: "Siamese", metadata: null })).toBe("Cat · Siamese (no name)");
    expect(petLabel({ species: "DOG", breed: null, metadata: '{"name":"Rex"}' })).toBe("Rex");
  });

  it("labels keys for people", () => {
    expect(fieldLabel("microchip")).toBe("Microchip");
    expect(fieldLabel("owner_phone")).toBe("Owner phone");
    expect(fieldLabel("ownerPhone")).toBe("Owner phone");
  });
});

describe("changedPetFields", () => {
  it("names the changed breed and metadata keys, never their values", () => {
    const before = { breed: "Beagle", metadata: '{"name":"Rex","owner":"A"}' };
    expect(changedPetFields(before, { breed: "Beagle", metadata: '{"name":"Rex","owner":"B","ward":"3"}' })).toEqual(["metadata.owner", "metadata.ward"]);
    expect(changedPetFields(before, { breed: "Collie", metadata: before.metadata })).toEqual(["breed"]);
    expect(changedPetFields({ breed: null, metadata: "x" }, { breed: null, metadata: "y" })).toEqual(["metadata"]);
  });
});
