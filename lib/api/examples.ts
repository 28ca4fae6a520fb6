// One worked example per /v2 operation, shown in the OpenAPI document (request body and success answer) and so in
// the API reference and any generated client's docs. lib/api/openapi.test.ts checks every operation has one and that
// each example is valid for its own schemas.

const PET_ID = "cmh2v8k3p0004s60ab1x2y3z4";
const SESSION_ID = "cmh2v9a1q0007s60a5d6e7f8g";
const JOB_ID = "cmh2vb2c40009s60ah8i9j0k1";
const PET = {
  id: PET_ID,
  species: "DOG",
  breed: "Beagle",
  metadata: '{"name":"Bella","chip":"985112004567890"}',
  hasFingerprint: true,
  createdAt: "2026-11-20T09:30:00.000Z",
};

export interface OperationExample {
  /** The JSON body sent (operations with a JSON body). */
  body?: unknown;
  /** The success envelope's `data` (operations that answer one). */
  data?: unknown;
}

export const OPERATION_EXAMPLES: Record<string, OperationExample> = {
  createPet: { body: { species: "DOG", breed: "Beagle", metadata: '{"name":"Bella","chip":"985112004567890"}' }, data: { id: PET_ID } },
  listPets: { data: [PET, { ...PET, id: "cmh2vc7d5000bs60am2n3o4p5", species: "CAT", breed: null, metadata: null, hasFingerprint: false }] },
  getPet: { data: PET },
  updatePet: { body: { metadata: '{"name":"Bella","chip":"985112004567890","owner":"J. Doe"}' }, data: { isSuccessful: true } },
  deletePet: {},
  createCaptureSession: { body: { species: "DOG", purpose: "PET_VERIFICATION", petId: PET_ID }, data: { id: SESSION_ID } },
  uploadFingerprint: { data: { id: "cmh2va3b20008s60ae5f6g7h8" } },
  uploadAppearance: { data: { id: "cmh2va9c30010s60ai9j0k1l2" } },
  addFingerprints: { body: { sessionId: SESSION_ID }, data: { jobId: JOB_ID } },
  verifyPet: { body: { sessionId: SESSION_ID }, data: { jobId: JOB_ID } },
  identifyPet: { body: { sessionId: SESSION_ID }, data: { jobId: JOB_ID } },
  getFingerprintAdditionJob: { data: { status: "SUCCESS" } },
  getVerificationJob: { data: { status: "SUCCESS", isVerified: true, score: 62.4 } },
  getIdentificationJob: { data: { status: "SUCCESS", pets: [{ id: PET_ID, score: 58.1, metadata: PET.metadata }] } },
};
