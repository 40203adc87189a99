from tests import builders
from tests.e2e.conftest import bearer


async def test_whoami_answers_over_a_real_socket(service):
    issued = await builders.plaintext_key(service.db)
    response = await service.client.get("/api/reporting/v1/whoami", headers=bearer(issued.key))
    assert response.status_code == 200, response.text
    assert response.json()["key"]["id"] == issued.id
