"""SQLAlchemy 1.4 (psycopg2): the key is server_default idgen_next(), read
back from the INSERT's RETURNING.

python3 sqlalchemy_orm.py HOST PORT USER DBNAME
prints "name id" for each row, with the id the ORM holds after the flush."""
import sys

from sqlalchemy import BigInteger, Column, Text, create_engine, text
from sqlalchemy.orm import Session, declarative_base

Base = declarative_base()


class Order(Base):
    __tablename__ = "orm_sqlalchemy"
    id = Column(BigInteger, primary_key=True, server_default=text("idgen_next()"))
    name = Column(Text, nullable=False)


host, port, user, dbname = sys.argv[1:5]
engine = create_engine(
    "postgresql+psycopg2://",
    connect_args=dict(host=host, port=port, user=user, dbname=dbname,
                      application_name="orm_sqlalchemy"),
)
with Session(engine) as session:
    single = [Order(name=f"sa-single-{i}") for i in range(5)]
    for o in single:
        session.add(o)
        session.flush()  # one INSERT ... RETURNING id each
    many = [Order(name=f"sa-many-{i}") for i in range(20)]
    session.add_all(many)
    session.flush()  # one statement for all, RETURNING every id
    # Read before the commit, which expires the objects: reading them after
    # it would reload them with a SELECT.
    held = [(o.name, o.id) for o in single + many]
    session.commit()
for name, id in held:
    print(name, id)
