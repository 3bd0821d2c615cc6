"""Django 3.2: a BigAutoField whose column default is idgen_next() (set with
idgen_adopt() after Django created the table), read back from RETURNING by
save() and bulk_create().

python3 django_orm.py HOST PORT USER DBNAME
prints "name id" for each row, with the id Django holds after saving."""
import sys

import django
from django.conf import settings

host, port, user, dbname = sys.argv[1:5]
settings.configure(
    DATABASES={
        "default": {
            "ENGINE": "django.db.backends.postgresql",
            "HOST": host,
            "PORT": port,
            "USER": user,
            "NAME": dbname,
            "OPTIONS": {"application_name": "orm_django"},
        }
    },
    INSTALLED_APPS=[],
    DEFAULT_AUTO_FIELD="django.db.models.BigAutoField",
    USE_TZ=True,
)
django.setup()

from django.db import connection, models, transaction  # noqa: E402


class Order(models.Model):
    id = models.BigAutoField(primary_key=True)
    name = models.TextField()

    class Meta:
        app_label = "shop"
        db_table = "orm_django"


# What a migration does: Django creates the table (a bigserial key), then
# RunSQL("SELECT idgen_adopt('orm_django', 'id')") switches it to idgen.
with connection.schema_editor() as editor:
    editor.create_model(Order)
with connection.cursor() as cur:
    cur.execute("SELECT idgen_adopt('orm_django', 'id')")
    cur.fetchall()

with transaction.atomic():
    single = []
    for i in range(5):
        o = Order(name=f"dj-single-{i}")
        o.save()  # INSERT ... RETURNING "orm_django"."id"
        single.append(o)
    many = Order.objects.bulk_create([Order(name=f"dj-many-{i}") for i in range(20)])
for o in single + many:
    print(o.name, o.id)
